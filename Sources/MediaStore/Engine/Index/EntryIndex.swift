import Foundation

/// The entries of one transaction: their records in `keys` (found by
/// cache key), their access rows and their places in the LRU and expiry
/// indexes (`access`, `lru`, `expiry`), and unfinished streamed writes in
/// `staging`. Knows nothing of chunks or extents.
struct EntryIndex {
    let txn: LMDBTransaction
    let db: StoreDatabases
    let counters: CounterLedger
    let keyDigest: (String) -> ContentDigest
    /// How records are stored (sealed in an encrypted store).
    let records: RecordCodec
    /// While a rekey is under way, the index key under the key it
    /// replaces: an entry not yet moved is found there.
    var replacedKeyDigest: ((String) -> ContentDigest)? = nil

    /// The slot holding `key`, if any, with its record.
    ///
    /// - parameter currentAccess: whether to read the entry's access tick
    ///   and time from `access` (needed to move it in the LRU index or to
    ///   report it); plain reads of the value skip that lookup.
    func find(_ key: String, currentAccess: Bool = true) throws -> (slot: Slot, record: EntryRecord)? {
        try locate(key, currentAccess: currentAccess).found
    }

    /// Where `key` is stored, or else the slot a new entry for it takes
    /// (one ordinal above the highest in use for its digest).
    func locate(_ key: String, currentAccess: Bool = true) throws -> (
        found: (slot: Slot, record: EntryRecord)?, free: Slot
    ) {
        let located = try locate(key, digest: keyDigest(key), currentAccess: currentAccess)
        guard located.found == nil, let replacedKeyDigest else { return located }
        // Not yet moved by a rekey under way: found under the replaced
        // key's index key, while a new entry goes under the new one.
        let replaced = try locate(key, digest: replacedKeyDigest(key), currentAccess: currentAccess)
        return (replaced.found, located.free)
    }

    func locate(_ key: String, digest: ContentDigest, currentAccess: Bool) throws -> (
        found: (slot: Slot, record: EntryRecord)?, free: Slot
    ) {
        let first = Slot(digest, ordinal: 0)
        func withAccess(_ record: EntryRecord, _ slot: Slot) throws -> EntryRecord {
            currentAccess ? try withCurrentAccess(record, slot: slot) : record
        }
        // Fast path: almost every key sits at ordinal 0 — one lookup, and
        // the record is decoded only when its key matches.
        let direct = try txn.withValue(db.keys, key: first) { buffer -> EntryRecord? in
            guard let buffer else { return nil }
            guard let record = records.decode(buffer, ifKey: key, context: RecordCodec.context(slot: first)) else {
                throw StoreError.corrupted(key: key, reason: "unreadable index record")
            }
            return record
        }
        if let direct { return ((first, try withAccess(direct, first)), first) }
        // A colliding key holds ordinal 0, or it was freed: walk the ordinals.
        let cursor = try txn.cursor(db.keys)
        var item = try cursor.seek(atLeast: first.bytes)
        var next: UInt16 = 0
        while let current = item, let slot = Slot(current.key), first.sharesDigest(with: current.key) {
            let record = try current.value.withUnsafeBytes { buffer in
                guard let record = records.decode(buffer, context: RecordCodec.context(slot: slot)) else {
                    throw StoreError.corrupted(key: key, reason: "unreadable index record")
                }
                return record
            }
            // Keys are compared as bytes: `==` on String is canonical
            // equivalence, under which "é" and "e\u{301}" would alias.
            if record.key.utf8.elementsEqual(key.utf8) {
                return ((slot, try withAccess(record, slot)), slot)
            }
            next = slot.ordinal &+ 1
            item = try cursor.next()
        }
        return (nil, Slot(digest, ordinal: next))
    }

    /// The record at `slot` with its current access, if there is one.
    func record(at slot: Slot) throws -> EntryRecord? {
        guard
            let record = try txn.withValue(
                db.keys, key: slot,
                { buffer in buffer.flatMap { records.decode($0, context: RecordCodec.context(slot: slot)) } })
        else {
            return nil
        }
        return try withCurrentAccess(record, slot: slot)
    }

    /// `record` with its access tick and time from `access`, which a
    /// batch of reads updates without rewriting the record.
    func withCurrentAccess(_ record: EntryRecord, slot: Slot) throws -> EntryRecord {
        try txn.withValue(db.access, key: slot) { buffer in
            guard let buffer, let row = AccessRow(buffer) else { return record }
            var record = record
            record.accessTick = row.tick
            record.lastAccess = row.time
            return record
        }
    }

    func save(_ record: EntryRecord, at slot: Slot) throws {
        try txn.put(db.keys, key: slot, value: records.encode(record, context: RecordCodec.context(slot: slot)))
    }

    /// Creates a fresh record (not yet saved) with a new entry id.
    func newRecord(key: String, options: WriteOptions, length: Int?, chunkSize: Int, now: Double) -> EntryRecord {
        counters.update { $0.nextEntryID += 1 }
        return EntryRecord(
            key: key, flags: options.pinned ? [.pinned] : [], entryID: counters.current.nextEntryID - 1,
            length: length, chunkSize: chunkSize, presentChunks: 0, cachedBytes: 0,
            digest: nil, created: now, lastAccess: now, accessTick: 0, expiry: nil, cost: max(0, options.cost),
            metadata: options.metadata, ownerPID: 0, inlineBytes: [])
    }

    /// Gives the entry a new access tick and moves it in the LRU index.
    ///
    /// - parameter savingRecord: whether the caller saves `record` in this
    ///   transaction. Its record then carries the access, and any `access`
    ///   row is deleted (a million fresh entries would otherwise cost a
    ///   million rows, and every batch of puts would rewrite most of their
    ///   pages); otherwise (a batch of reads) the `access` row holds it.
    func touch(_ record: inout EntryRecord, slot: Slot, at time: Double, savingRecord: Bool = true) throws {
        if record.accessTick != 0 {
            try txn.delete(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: slot))
        }
        counters.update { $0.accessTick += 1 }
        record.accessTick = counters.current.accessTick
        record.lastAccess = time
        if !record.isPinned {
            // The new tick is the highest, so the row goes at the end: as
            // an append LMDB fills the page instead of splitting it in half.
            let key = StoreKeys.lru(tick: record.accessTick, slot: slot)
            do {
                try txn.put(db.lru, key: key, value: [UInt8](), append: true)
            } catch .keyExists {
                try txn.put(db.lru, key: key, value: [UInt8]())
            }
        }
        if savingRecord {
            try txn.delete(db.access, key: slot)
        } else {
            try txn.put(db.access, key: slot, value: AccessRow(tick: record.accessTick, time: time).encode())
        }
    }

    func setExpiry(_ record: inout EntryRecord, slot: Slot, to date: Date?) throws {
        if let old = record.expiry {
            try txn.delete(db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(old), slot: slot))
        }
        record.setExpiry(date)
        if let expiry = record.expiry {
            try txn.put(
                db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(expiry), slot: slot), value: [UInt8]())
        }
    }

    /// The order of the expiry index: milliseconds since 1970, clamped.
    static func milliseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return seconds >= 1.8e16 ? UInt64.max : UInt64(seconds * 1000)
    }

    /// Saves a new record at `slot` (free, see ``locate(_:currentAccess:)``)
    /// and indexes it (LRU, expiry, counters); a pinned one (written with
    /// ``WriteOptions/pinned``) is held by the app. Returns the record as saved.
    func add(_ record: EntryRecord, at slot: Slot, expiry: Date?, now: Double) throws -> EntryRecord {
        var record = record
        if record.isPinned { _ = try HoldTable(txn: txn, db: db).add(HoldTable.appHolderBytes, to: slot) }
        try setExpiry(&record, slot: slot, to: expiry)
        try touch(&record, slot: slot, at: now)
        try save(record, at: slot)
        counters.update {
            $0.entryCount += 1
            $0.logicalBytes += record.cachedBytes
            if record.isComplete { $0.completeCount += 1 }
            if record.isUnchunked { $0.storedBytes += record.unchunkedLength }
        }
        return record
    }

    /// Deletes an entry's record and index rows, its holds with them (not its extents).
    func remove(_ record: EntryRecord, at slot: Slot) throws {
        if record.isPinned { try HoldTable(txn: txn, db: db).removeAll(of: slot) }
        if record.accessTick != 0 {
            try txn.delete(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: slot))
        }
        try txn.delete(db.access, key: slot)
        if let expiry = record.expiry {
            try txn.delete(db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(expiry), slot: slot))
        }
        try txn.delete(db.keys, key: slot)
        counters.update {
            $0.entryCount -= 1
            $0.logicalBytes -= record.cachedBytes
            if record.isComplete { $0.completeCount -= 1 }
            if record.isUnchunked { $0.storedBytes -= record.unchunkedLength }
        }
    }
}
