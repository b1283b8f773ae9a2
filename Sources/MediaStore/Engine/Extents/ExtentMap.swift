/// The extents of one transaction: for each entry id and chunk index,
/// which chunk holds that piece of the entry and its raw length (one
/// ``ExtentRow`` in `extents`). Holds references to chunks without
/// counting them: the ``ChunkStore`` does that.
struct ExtentMap {
    let txn: LMDBTransaction
    let db: StoreDatabases

    /// The row at `index` of an entry.
    func row(entryID: UInt64, index: Int) throws -> ExtentRow? {
        try txn.withValue(db.extents, key: StoreKeys.extent(entryID: entryID, index: index)) { buffer in
            buffer.flatMap(ExtentRow.init)
        }
    }

    /// Whether the entry has a row at `index`.
    func contains(entryID: UInt64, index: Int) throws -> Bool {
        try txn.withValue(db.extents, key: StoreKeys.extent(entryID: entryID, index: index)) { buffer in
            buffer.map { $0.count == ExtentRow.size } ?? false
        }
    }

    func put(_ row: ExtentRow, entryID: UInt64, index: Int) throws {
        try txn.put(db.extents, key: StoreKeys.extent(entryID: entryID, index: index), value: row.encode())
    }

    /// Indices and raw lengths of the pieces an entry has, in order.
    func lengths(entryID: UInt64) throws -> [(index: Int, length: Int)] {
        var result: [(index: Int, length: Int)] = []
        try forEachRow(entryID: entryID) { index, value in
            guard let length = value.withUnsafeBytes(ExtentRow.length(in:)) else { return false }
            result.append((index, length))
            return true
        }
        return result
    }

    /// The rows of an entry with their indices, in order.
    func rows(entryID: UInt64) throws -> [(index: Int, row: ExtentRow)] {
        var result: [(index: Int, row: ExtentRow)] = []
        try forEachRow(entryID: entryID) { index, value in
            guard let row = value.withUnsafeBytes(ExtentRow.init) else { return false }
            result.append((index, row))
            return true
        }
        return result
    }

    /// Deletes every row of an entry; returns the chunks they pointed at
    /// (one reference each, for the caller to release).
    func removeAll(entryID: UInt64) throws -> [Slot] {
        let prefix = StoreKeys.entryID(entryID)
        let cursor = try txn.cursor(db.extents)
        var rows: [(key: [UInt8], chunk: Slot?)] = []
        var item = try cursor.seek(atLeast: prefix)
        while let current = item, current.key.starts(with: prefix) {
            rows.append((current.key, Slot(current.value.prefix(Slot.size))))
            item = try cursor.next()
        }
        for row in rows { try txn.delete(db.extents, key: row.key) }
        return rows.compactMap(\.chunk)
    }

    /// Walks an entry's rows in index order while `body` returns `true`
    /// (and the keys and values have the extent layout).
    private func forEachRow(entryID: UInt64, _ body: (_ index: Int, _ value: [UInt8]) throws -> Bool) throws {
        let prefix = StoreKeys.entryID(entryID)
        let cursor = try txn.cursor(db.extents)
        var item = try cursor.seek(atLeast: prefix)
        while let current = item, current.key.starts(with: prefix),
            let index = StoreKeys.extentIndex(ofKey: current.key),
            try body(index, current.value)
        {
            item = try cursor.next()
        }
    }
}
