/// Moving an entry from its index key under a replaced store key to its
/// index key under the new one (a rekey, ``StoreTransaction/rekeyStep(_:limits:)``).
extension EntryIndex {
    /// Where `key` goes under the current keys: the slot holding it there
    /// (with its record) or the free slot a new entry takes. Never looks
    /// under the replaced keys.
    func locateUnderCurrentKeys(_ key: String) throws -> (found: (slot: Slot, record: EntryRecord)?, free: Slot) {
        try locate(key, digest: keyDigest(key), currentAccess: false)
    }

    /// Moves the entry `record` from `old` to `new` (free): its record
    /// (sealed again for its new row), access row, LRU and expiry rows and
    /// holds. Its access order, expiry and holders stay as they were; the
    /// counters do not change.
    func move(_ record: EntryRecord, from old: Slot, to new: Slot) throws {
        let record = try withCurrentAccess(record, slot: old)
        if record.accessTick != 0, try txn.delete(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: old)) {
            try txn.put(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: new), value: [UInt8]())
        }
        try txn.delete(db.access, key: old)
        if let expiry = record.expiry {
            let milliseconds = Self.milliseconds(expiry)
            if try txn.delete(db.expiry, key: StoreKeys.expiry(milliseconds: milliseconds, slot: old)) {
                try txn.put(db.expiry, key: StoreKeys.expiry(milliseconds: milliseconds, slot: new), value: [UInt8]())
            }
        }
        let holds = HoldTable(txn: txn, db: db)
        let holders = try holds.holders(of: old)
        if !holders.isEmpty {
            try holds.removeAll(of: old)
            for holder in holders { _ = try holds.add(holder, to: new) }
        }
        try txn.delete(db.keys, key: old)
        try save(record, at: new)
    }
}
