extension EntryIndex {
    /// Every entry record with its slot, in slot order.
    func allRecords() throws -> [(slot: Slot, record: EntryRecord)] {
        let cursor = try txn.cursor(db.keys)
        var result: [(Slot, EntryRecord)] = []
        var item = try cursor.first()
        while let current = item {
            if let slot = Slot(current.key),
                let record = current.value.withUnsafeBytes({
                    records.decode($0, context: RecordCodec.context(slot: slot))
                })
            {
                result.append((slot, try withCurrentAccess(record, slot: slot)))
            }
            item = try cursor.next()
        }
        return result
    }

    /// Up to `limit` records after `slot` (exclusive), for bounded scans.
    func records(after slot: Slot?, limit: Int) throws -> [(slot: Slot, record: EntryRecord)] {
        let cursor = try txn.cursor(db.keys)
        var result: [(Slot, EntryRecord)] = []
        var item = try slot.map { try cursor.seek(atLeast: $0.bytes) } ?? cursor.first()
        if let slot, item?.key == slot.bytes { item = try cursor.next() }
        while let current = item, result.count < limit {
            if let slot = Slot(current.key),
                let record = current.value.withUnsafeBytes({
                    records.decode($0, context: RecordCodec.context(slot: slot))
                })
            {
                result.append((slot, try withCurrentAccess(record, slot: slot)))
            }
            item = try cursor.next()
        }
        return result
    }

    /// One row of the LRU or expiry index, as walked by eviction and expiry.
    struct OrderedRow {
        /// The row's key, to resume the walk after it or to delete it.
        let key: [UInt8]
        /// The tick (LRU) or milliseconds since 1970 (expiry).
        let order: UInt64
        let slot: Slot
    }

    /// The least recently used entry's row after `resumeAfter` (exclusive),
    /// or the first; `nil` at the end of the index.
    func leastRecentlyUsed(after resumeAfter: [UInt8]?) throws -> OrderedRow? {
        try firstRow(of: db.lru, after: resumeAfter)
    }

    /// The soonest-expiring entry's row after `resumeAfter` (exclusive),
    /// or the first; `nil` at the end of the index.
    func soonestExpiring(after resumeAfter: [UInt8]?) throws -> OrderedRow? {
        try firstRow(of: db.expiry, after: resumeAfter)
    }

    /// Deletes an LRU row that points at no entry.
    func deleteStaleLRURow(_ row: OrderedRow) throws {
        try txn.delete(db.lru, key: row.key)
    }

    /// Deletes an expiry row that points at no entry.
    func deleteStaleExpiryRow(_ row: OrderedRow) throws {
        try txn.delete(db.expiry, key: row.key)
    }

    private func firstRow(of database: LMDBDatabase, after resumeAfter: [UInt8]?) throws -> OrderedRow? {
        let cursor = try txn.cursor(database)
        var item = try resumeAfter.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
        if let resume = resumeAfter, item?.key == resume { item = try cursor.next() }
        guard let current = item, let (order, slot) = StoreKeys.orderedSlot(ofKey: current.key) else { return nil }
        return OrderedRow(key: current.key, order: order, slot: slot)
    }
}
