/// Unfinished streamed writes: their records live in `staging`, under
/// their entry id, until ``EntryWriter/finish()`` moves them into `keys`.
extension EntryIndex {
    func stagingRecord(_ id: UInt64) throws -> EntryRecord? {
        let key = StoreKeys.entryID(id)
        return try txn.withValue(db.staging, key: key) {
            $0.flatMap { records.decode($0, context: RecordCodec.context(stagingKey: key)) }
        }
    }

    func saveStaging(_ record: EntryRecord) throws {
        let key = StoreKeys.entryID(record.entryID)
        try txn.put(db.staging, key: key, value: records.encode(record, context: RecordCodec.context(stagingKey: key)))
    }

    func deleteStaging(_ id: UInt64) throws {
        try txn.delete(db.staging, key: StoreKeys.entryID(id))
    }

    /// Deletes the staging row stored under `key`.
    func deleteStagingRow(key: [UInt8]) throws {
        try txn.delete(db.staging, key: key)
    }

    /// How many streamed writes are unfinished.
    func stagingCount() throws -> Int {
        try txn.count(db.staging)
    }

    /// The entry ids of every staging record.
    func stagingEntryIDs() throws -> [UInt64] {
        let cursor = try txn.cursor(db.staging)
        var ids: [UInt64] = []
        var item = try cursor.first()
        while let current = item {
            if current.key.count == 8 { ids.append(StoreKeys.bigEndianUInt64(current.key)) }
            item = try cursor.next()
        }
        return ids
    }

    /// Every readable staging record for which `isAbandoned` holds, with
    /// its row's key; unreadable rows are deleted on the way.
    func abandonedStaging(_ isAbandoned: (EntryRecord) -> Bool) throws -> [(key: [UInt8], record: EntryRecord)] {
        let cursor = try txn.cursor(db.staging)
        var abandoned: [(key: [UInt8], record: EntryRecord)] = []
        var item = try cursor.first()
        while let current = item {
            if let record = current.value.withUnsafeBytes({
                records.decode($0, context: RecordCodec.context(stagingKey: current.key))
            }) {
                if isAbandoned(record) { abandoned.append((current.key, record)) }
            } else {
                try txn.delete(db.staging, key: current.key)
            }
            item = try cursor.next()
        }
        return abandoned
    }
}
