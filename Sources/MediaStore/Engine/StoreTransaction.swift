import Foundation

/// One LMDB transaction over the store's databases, and the engine's
/// parts over it: the ``EntryIndex`` (records, key lookup, LRU and expiry),
/// the ``ChunkStore`` (content-addressed chunks, sharing, zstd,
/// verification) and the ``ExtentMap`` (which chunk holds which piece of
/// an entry). The operations that span them (insert, remove, fill,
/// read, eviction) are in this type's extensions.
///
/// Everything here runs inside one transaction; nothing is visible to
/// other readers until ``commit()``. Lives for one call (or one chunk).
/// It gets what it needs from the store as an ``EngineContext``.
package final class StoreTransaction {
    let txn: LMDBTransaction
    let db: StoreDatabases
    let context: EngineContext
    let ledger: CounterLedger
    let index: EntryIndex
    /// Made on first use (so are ``packs``): a lookup of a small value
    /// needs neither.
    private(set) lazy var chunks = ChunkStore(
        txn: txn, db: db, counters: ledger, codec: context.codec,
        compressionLevel: context.configuration.compressionLevel, verified: context.verifiedChunks,
        encryption: context.encryption)
    let extents: ExtentMap
    /// Small whole values, several to a row (store format 4).
    private(set) lazy var packs = PackStore(txn: txn, db: db, state: txn.isReadOnly ? nil : PackStore.PackState())
    /// Entries this transaction removed by policy (eviction, expiry),
    /// reported to the store's removal handler after commit.
    var removals: [StoreRemoval] = []
    let now: Double

    init(environment: LMDBEnvironment, databases: StoreDatabases, context: EngineContext, write: Bool) throws {
        let txn = try LMDBTransaction(environment: environment, readOnly: !write)
        let ledger = try CounterLedger(txn: txn, meta: databases.meta, strict: write)
        self.txn = txn
        self.db = databases
        self.context = context
        self.ledger = ledger
        self.index = EntryIndex(
            txn: txn, db: databases, counters: ledger, keyDigest: context.keyDigest,
            records: RecordCodec(
                sealer: context.encryption?.recordSealer,
                olderSealers: context.encryption?.replaced.map { [$0.recordSealer] } ?? []),
            replacedKeyDigest: context.encryption?.replaced.map { replaced in
                { replaced.indexKey(forCacheKey: $0) }
            })
        self.extents = ExtentMap(txn: txn, db: databases)
        self.now = Date().timeIntervalSince1970
    }

    var configuration: StoreConfiguration { context.configuration }

    /// The store's totals as of this transaction.
    var counters: StoreCounters { ledger.current }

    func updateCounters(_ body: (inout StoreCounters) -> Void) {
        ledger.update(body)
    }

    func commit() throws {
        try finishPacks()
        try ledger.save()
        try txn.commit()
    }

    /// Ends the transaction without committing; safe after a commit.
    func abort() {
        txn.abort()
    }

    // MARK: Entries across the parts

    /// A fresh record (not yet saved) with a new entry id and the store's chunk size.
    func newRecord(key: String, options: WriteOptions, length: Int?) -> EntryRecord {
        index.newRecord(key: key, options: options, length: length, chunkSize: configuration.chunkSize, now: now)
    }

    /// Saves a new entry at `key`'s slot, replacing any entry there, and
    /// indexes it (LRU, expiry, counters). Returns the record as saved.
    ///
    /// - parameter packing: the whole value, to store in a pack (the
    ///   record must be complete with its length and digest set).
    @discardableResult
    func insert(_ record: EntryRecord, expiry: Date?, packing value: UnsafeRawBufferPointer? = nil) throws
        -> EntryRecord
    {
        let (existing, slot) = try index.locate(record.key)
        if let existing { try removeEntry(existing.record, slot: existing.slot) }
        var record = record
        if let value {
            (record.packID, record.packOffset) = try packs.append(value, owner: slot)
            record.flags.insert(.packed)
        }
        return try index.add(record, at: slot, expiry: expiry, now: now)
    }

    /// Deletes an entry, its index rows and its references to chunks or its pack.
    func removeEntry(_ record: EntryRecord, slot: Slot) throws {
        if record.isPacked {
            try packs.release(id: record.packID, length: record.unchunkedLength)
        } else {
            try releaseExtents(entryID: record.entryID)
        }
        try index.remove(record, at: slot)
    }

    /// Drops every extent row of an entry and the chunk references they hold.
    func releaseExtents(entryID: UInt64) throws {
        for chunk in try extents.removeAll(entryID: entryID) { try chunks.release(chunk) }
    }

    /// Stores one piece of an entry as a chunk (shared when an identical
    /// one is stored) and points the entry's extent `index` at it.
    func putPiece(_ bytes: UnsafeRawBufferPointer, entryID: UInt64, index: Int, compress: inout Bool) throws {
        let chunk = try chunks.store(bytes, compress: &compress)
        try extents.put(ExtentRow(chunk: chunk, length: bytes.count), entryID: entryID, index: index)
    }

    /// The entry for `key`, which must be version `version`.
    ///
    /// - throws: ``StoreError/entryReplaced(key:expected:found:)`` otherwise.
    func findEntry(_ key: String, version: UInt64) throws -> (slot: Slot, record: EntryRecord) {
        guard let (slot, record) = try index.find(key) else {
            throw StoreError.entryReplaced(key: key, expected: version, found: nil)
        }
        guard record.entryID == version else {
            throw StoreError.entryReplaced(key: key, expected: version, found: record.entryID)
        }
        return (slot, record)
    }
}
