import Foundation

/// One LMDB transaction over the store's databases, with the operations
/// the store is built from: slots, records, chunks, extents and counters.
///
/// Everything here runs inside one transaction; nothing is visible to
/// other readers until ``commit()``. Lives for one call (or one chunk).
package final class StoreTransaction {
    let txn: LMDBTransaction
    let db: StoreDatabases
    let store: MediaStore
    private var loadedCounters: StoreCounters?
    private var countersChanged = false
    /// Entries this transaction removed by policy (eviction, expiry),
    /// reported to the store's removal handler after commit.
    var removals: [StoreRemoval] = []
    let now: Double

    init(store: MediaStore, write: Bool) throws {
        self.store = store
        self.db = store.databases
        self.txn = try LMDBTransaction(environment: store.environment, readOnly: !write)
        self.now = Date().timeIntervalSince1970
        if write {
            // A write commits the counters it read: an unreadable record
            // must stop it rather than be replaced by zeros.
            loadedCounters = try Self.readCounters(txn, db)
        }
    }

    /// The store's totals as of this transaction (read on first use by
    /// readers; a reader that cannot decode them sees zeros).
    var counters: StoreCounters {
        if let loadedCounters { return loadedCounters }
        let counters = (try? Self.readCounters(txn, db)) ?? StoreCounters()
        loadedCounters = counters
        return counters
    }

    private static func readCounters(_ txn: LMDBTransaction, _ db: StoreDatabases) throws -> StoreCounters {
        try txn.withValue(db.meta, key: countersKey) { buffer in
            guard let buffer else { return StoreCounters() }
            guard let counters = StoreCounters.decode(buffer) else {
                throw StoreError.damagedStore(reason: "the store's counters record is unreadable")
            }
            return counters
        }
    }

    private static let countersKey = Array("counters".utf8)

    func updateCounters(_ body: (inout StoreCounters) -> Void) {
        var updated = counters
        body(&updated)
        loadedCounters = updated
        countersChanged = true
    }

    func commit() throws {
        if countersChanged {
            try txn.put(db.meta, key: Self.countersKey, value: counters.encode())
        }
        try txn.commit()
    }

    // MARK: Slots and records

    /// The slot holding `key`, if any, with its record.
    ///
    /// - parameter currentAccess: whether to read the entry's access tick
    ///   and time from `access` (needed to move it in the LRU index or to
    ///   report it); plain reads of the value skip that lookup.
    func findEntry(_ key: String, currentAccess: Bool = true) throws -> (slot: [UInt8], record: EntryRecord)? {
        try locate(key, currentAccess: currentAccess).found
    }

    /// Where `key` is stored, or else the slot a new entry for it takes
    /// (one ordinal above the highest in use for its digest).
    private func locate(_ key: String, currentAccess: Bool = true) throws -> (
        found: (slot: [UInt8], record: EntryRecord)?, free: [UInt8]
    ) {
        let digest = store.keyDigest(key)
        let prefix = StoreKeys.slot(digest, ordinal: 0)
        func withAccess(_ record: EntryRecord, _ slot: [UInt8]) throws -> EntryRecord {
            currentAccess ? try withCurrentAccess(record, slot: slot) : record
        }
        // Fast path: almost every key sits at ordinal 0 — one lookup, and
        // the record is decoded only when its key matches.
        let direct = try txn.withValue(db.keys, key: prefix) { buffer -> EntryRecord? in
            guard let buffer, EntryRecord.storedKeyMatches(buffer, key) else { return nil }
            guard let record = EntryRecord.decode(buffer) else {
                throw StoreError.corrupted(key: key, reason: "unreadable index record")
            }
            return record
        }
        if let direct { return ((prefix, try withAccess(direct, prefix)), prefix) }
        // A colliding key holds ordinal 0, or it was freed: walk the ordinals.
        let cursor = try txn.cursor(db.keys)
        var item = try cursor.seek(atLeast: prefix)
        var next: UInt16 = 0
        while let current = item, current.key.count == StoreKeys.slotSize,
            current.key.starts(with: prefix.prefix(16))
        {
            let record = try current.value.withUnsafeBytes { buffer in
                guard let record = EntryRecord.decode(buffer) else {
                    throw StoreError.corrupted(key: key, reason: "unreadable index record")
                }
                return record
            }
            // Keys are compared as bytes: `==` on String is canonical
            // equivalence, under which "é" and "e\u{301}" would alias.
            if record.key.utf8.elementsEqual(key.utf8) {
                return ((current.key, try withAccess(record, current.key)), current.key)
            }
            next = StoreKeys.ordinal(ofSlot: current.key) &+ 1
            item = try cursor.next()
        }
        return (nil, StoreKeys.slot(digest, ordinal: next))
    }

    func record(atSlot slot: [UInt8]) throws -> EntryRecord? {
        guard let record = try txn.withValue(db.keys, key: slot, { buffer in buffer.flatMap(EntryRecord.decode) })
        else {
            return nil
        }
        return try withCurrentAccess(record, slot: slot)
    }

    /// `record` with its access tick and time from `access`, which a
    /// batch of reads updates without rewriting the record.
    func withCurrentAccess(_ record: EntryRecord, slot: [UInt8]) throws -> EntryRecord {
        try txn.withValue(db.access, key: slot) { buffer in
            guard let buffer, buffer.count == 16 else { return record }
            var record = record
            record.accessTick = UInt64(littleEndian: buffer.loadUnaligned(as: UInt64.self))
            record.lastAccess = Double(
                bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            return record
        }
    }

    func save(_ record: EntryRecord, atSlot slot: [UInt8]) throws {
        try txn.put(db.keys, key: slot, value: record.encode())
    }

    /// Gives the entry a new access tick and moves it in the LRU index.
    func touch(_ record: inout EntryRecord, slot: [UInt8], at time: Double) throws {
        if record.accessTick != 0 {
            try txn.delete(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: slot))
        }
        updateCounters { $0.accessTick += 1 }
        record.accessTick = counters.accessTick
        record.lastAccess = time
        if !record.isPinned {
            try txn.put(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: slot), value: [UInt8]())
        }
        var row = ByteWriter(capacity: 16)
        row.write(littleEndian: record.accessTick)
        row.write(time)
        try txn.put(db.access, key: slot, value: row.bytes)
    }

    func setExpiry(_ record: inout EntryRecord, slot: [UInt8], to date: Date?) throws {
        if let old = record.expiry {
            try txn.delete(db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(old), slot: slot))
        }
        record.setExpiry(date)
        if let expiry = record.expiry {
            try txn.put(
                db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(expiry), slot: slot), value: [UInt8]())
        }
    }

    static func milliseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return seconds >= 1.8e16 ? UInt64.max : UInt64(seconds * 1000)
    }

    /// Creates a fresh record (not yet saved) with a new entry id.
    func newRecord(key: String, options: WriteOptions, length: Int?) -> EntryRecord {
        updateCounters { $0.nextEntryID += 1 }
        return EntryRecord(
            key: key, flags: options.pinned ? [.pinned] : [], entryID: counters.nextEntryID - 1,
            length: length, chunkSize: store.configuration.chunkSize, presentChunks: 0, cachedBytes: 0,
            digest: nil, created: now, lastAccess: now, accessTick: 0, expiry: nil, cost: options.cost,
            metadata: options.metadata, ownerPID: 0, inlineBytes: [])
    }

    /// Saves a new entry at `key`'s slot, replacing any entry there, and
    /// indexes it (LRU, expiry, counters). Returns the record as saved.
    @discardableResult
    func insert(_ record: EntryRecord, expiry: Date?) throws -> EntryRecord {
        var record = record
        let (existing, slot) = try locate(record.key)
        if let existing { try removeEntry(existing.record, slot: existing.slot) }
        try setExpiry(&record, slot: slot, to: expiry)
        try touch(&record, slot: slot, at: now)
        try save(record, atSlot: slot)
        updateCounters {
            $0.entryCount += 1
            $0.logicalBytes += record.cachedBytes
            if record.isComplete { $0.completeCount += 1 }
            if record.isInline { $0.storedBytes += record.inlineBytes.count }
        }
        return record
    }

    /// Deletes an entry, its index rows and its references to chunks.
    func removeEntry(_ record: EntryRecord, slot: [UInt8]) throws {
        try releaseExtents(entryID: record.entryID)
        if record.accessTick != 0 {
            try txn.delete(db.lru, key: StoreKeys.lru(tick: record.accessTick, slot: slot))
        }
        try txn.delete(db.access, key: slot)
        if let expiry = record.expiry {
            try txn.delete(db.expiry, key: StoreKeys.expiry(milliseconds: Self.milliseconds(expiry), slot: slot))
        }
        try txn.delete(db.keys, key: slot)
        updateCounters {
            $0.entryCount -= 1
            $0.logicalBytes -= record.cachedBytes
            if record.isComplete { $0.completeCount -= 1 }
            if record.isInline { $0.storedBytes -= record.inlineBytes.count }
        }
    }

    /// Drops every extent row of an entry and the chunk references they hold.
    func releaseExtents(entryID: UInt64) throws {
        let prefix = StoreKeys.entryID(entryID)
        let cursor = try txn.cursor(db.extents)
        var rows: [(key: [UInt8], chunk: [UInt8])] = []
        var item = try cursor.seek(atLeast: prefix)
        while let current = item, current.key.starts(with: prefix) {
            rows.append((current.key, Array(current.value.prefix(StoreKeys.slotSize))))
            item = try cursor.next()
        }
        for row in rows {
            try releaseChunk(row.chunk)
            try txn.delete(db.extents, key: row.key)
        }
    }

    // MARK: Extents

    /// The chunk slot and raw length stored at `index` of an entry.
    func extent(entryID: UInt64, index: Int) throws -> (chunk: [UInt8], length: Int)? {
        try txn.withValue(db.extents, key: StoreKeys.extent(entryID: entryID, index: index)) { buffer in
            guard let buffer, buffer.count == StoreKeys.slotSize + 4 else { return nil }
            let length = UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: StoreKeys.slotSize, as: UInt32.self))
            return ([UInt8](buffer.prefix(StoreKeys.slotSize)), Int(length))
        }
    }

    func putExtent(entryID: UInt64, index: Int, chunk: [UInt8], length: Int) throws {
        var writer = ByteWriter(capacity: 22)
        writer.write(raw: chunk)
        writer.write(littleEndian: UInt32(length))
        try txn.put(db.extents, key: StoreKeys.extent(entryID: entryID, index: index), value: writer.bytes)
    }

    /// Indices and raw lengths of the chunks an entry has, in order.
    func extents(entryID: UInt64) throws -> [(index: Int, length: Int)] {
        let prefix = StoreKeys.entryID(entryID)
        let cursor = try txn.cursor(db.extents)
        var result: [(Int, Int)] = []
        var item = try cursor.seek(atLeast: prefix)
        while let current = item, current.key.starts(with: prefix), current.key.count == 12,
            current.value.count == StoreKeys.slotSize + 4
        {
            let index =
                Int(current.key[8]) << 24 | Int(current.key[9]) << 16 | Int(current.key[10]) << 8 | Int(current.key[11])
            let length =
                Int(current.value[18]) | Int(current.value[19]) << 8 | Int(current.value[20]) << 16 | Int(
                    current.value[21]) << 24
            result.append((index, length))
            item = try cursor.next()
        }
        return result
    }

    // MARK: Chunks

    /// Stores one chunk (or shares an identical stored one) and returns
    /// its slot, holding one new reference.
    ///
    /// - parameter compress: whether to try zstd. Set to `false` when the
    ///   attempt saved too little, so that the caller skips the attempt
    ///   for the rest of an entry whose first chunk did not compress.
    func storeChunk(_ bytes: UnsafeRawBufferPointer, compress: inout Bool) throws -> [UInt8] {
        let digest = ContentDigest(of: bytes)
        let prefix = StoreKeys.slot(digest, ordinal: 0)
        let cursor = try txn.cursor(db.chunks)
        var candidate = try cursor.seekKey(atLeast: prefix)
        var nextOrdinal: UInt16 = 0
        while let current = candidate, current.starts(with: prefix.prefix(16)) {
            // Share only after the bytes compare equal: XXH3 is not
            // collision-resistant, and one URL must never get another's bytes.
            let same = try txn.withValue(db.chunks, key: current) { stored in
                stored.map { Self.chunk($0, holds: bytes) } ?? false
            }
            if same {
                try addReference(current, delta: 1)
                return current
            }
            nextOrdinal = StoreKeys.ordinal(ofSlot: current) &+ 1
            candidate = try cursor.nextKey()
        }
        let slot = StoreKeys.slot(digest, ordinal: nextOrdinal)
        let level = store.configuration.compressionLevel
        let attempt = compress && level > 0 && bytes.count >= 64
        let compressed = attempt ? store.withCodec { $0.compress(bytes, limit: bytes.count - bytes.count / 33) } : nil
        if attempt && compressed == nil { compress = false }
        let header = ChunkHeader(
            codec: compressed == nil ? .raw : .zstd, rawLength: bytes.count,
            storedLength: compressed?.count ?? bytes.count)
        let total = ChunkHeader.size + header.storedLength
        try txn.putReserved(db.chunks, key: slot, count: total) { out in
            header.encode(into: out)
            let payload = UnsafeMutableRawBufferPointer(rebasing: out[ChunkHeader.size...])
            if let compressed {
                compressed.withUnsafeBytes { payload.copyMemory(from: $0) }
            } else {
                payload.copyMemory(from: bytes)
            }
        }
        try txn.put(db.refs, key: slot, value: Self.refValue(1))
        updateCounters {
            $0.chunkCount += 1
            $0.storedBytes += total
            $0.uniqueChunkBytes += bytes.count
        }
        return slot
    }

    static func refValue(_ count: UInt32) -> [UInt8] {
        withUnsafeBytes(of: count.littleEndian) { Array($0) }
    }

    func referenceCount(_ slot: [UInt8]) throws -> Int {
        try txn.withValue(db.refs, key: slot) { buffer in
            guard let buffer, buffer.count == 4 else { return 0 }
            return Int(UInt32(littleEndian: buffer.loadUnaligned(as: UInt32.self)))
        }
    }

    func addReference(_ slot: [UInt8], delta: Int) throws {
        let count = try referenceCount(slot) + delta
        try txn.put(db.refs, key: slot, value: Self.refValue(UInt32(max(0, count))))
    }

    /// Drops one reference; deletes the chunk when none is left.
    func releaseChunk(_ slot: [UInt8]) throws {
        let count = try referenceCount(slot)
        if count > 1 {
            try txn.put(db.refs, key: slot, value: Self.refValue(UInt32(count - 1)))
            return
        }
        let size = try txn.withValue(db.chunks, key: slot) { buffer -> (stored: Int, raw: Int)? in
            guard let buffer else { return nil }
            let header = ChunkHeader.decode(buffer)
            return (buffer.count, header?.rawLength ?? 0)
        }
        try txn.delete(db.refs, key: slot)
        if let size {
            store.verifiedChunks.forget(slot: slot)
            try txn.delete(db.chunks, key: slot)
            updateCounters {
                $0.chunkCount -= 1
                $0.storedBytes -= size.stored
                $0.uniqueChunkBytes -= size.raw
            }
        }
    }

    /// Reads and verifies a chunk: its header, its decompression and its
    /// digest (the slot's first 16 bytes) must all agree.
    ///
    /// - parameter trusting: whether a chunk this store instance already
    ///   verified where it sits may skip hashing (``VerifiedChunks``);
    ///   `verify()` passes `false`.
    func readChunk(_ slot: [UInt8], trusting: Bool = true) throws -> [UInt8] {
        try withVerifiedChunk(slot, trusting: trusting) { [UInt8]($0) }
    }

    /// Calls `body` with a chunk's verified raw bytes, without copying
    /// them when the chunk is stored raw (the buffer is then the map
    /// itself, valid only inside `body`). A chunk this store instance
    /// verified before, at the same address and length, is not hashed
    /// again unless `trusting` is `false` (see ``VerifiedChunks``).
    func withVerifiedChunk<R>(_ slot: [UInt8], trusting: Bool = true, _ body: (UnsafeRawBufferPointer) throws -> R)
        throws -> R
    {
        try txn.withValue(db.chunks, key: slot) { buffer in
            guard let buffer else { throw ChunkFault.missing }
            guard let digest = ContentDigest(canonical: slot), let header = ChunkHeader.decode(buffer) else {
                throw ChunkFault.header
            }
            // Only a read transaction's buffers are the map (a write
            // transaction's own pages are copies until it commits).
            let verified = txn.isReadOnly ? store.verifiedChunks : nil
            let trusted = trusting && verified?.contains(slot: slot, digest: digest, payload: buffer) == true
            let payload = UnsafeRawBufferPointer(rebasing: buffer[ChunkHeader.size...])
            if header.codec == .raw {
                if !trusted {
                    guard ContentDigest(of: payload) == digest else { throw ChunkFault.checksum }
                    verified?.insert(slot: slot, digest: digest, payload: buffer)
                }
                return try body(payload)
            }
            let raw = try Self.decodeChunk(buffer, expected: trusted ? nil : digest)
            if !trusted { verified?.insert(slot: slot, digest: digest, payload: buffer) }
            return try raw.withUnsafeBytes(body)
        }
    }

    /// Whether the stored chunk value decodes to exactly `bytes` (raw
    /// chunks are compared in place, without a copy).
    static func chunk(_ value: UnsafeRawBufferPointer, holds bytes: UnsafeRawBufferPointer) -> Bool {
        guard let header = ChunkHeader.decode(value), header.rawLength == bytes.count else { return false }
        if bytes.isEmpty { return true }
        if header.codec == .raw {
            return memcmp(value.baseAddress! + ChunkHeader.size, bytes.baseAddress!, bytes.count) == 0
        }
        guard let raw = try? decodeChunk(value, expected: nil) else { return false }
        return raw.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
    }

    /// Decodes a chunk value into its raw bytes, checking `expected`.
    package static func decodeChunk(_ value: UnsafeRawBufferPointer, expected: ContentDigest?) throws -> [UInt8] {
        guard let header = ChunkHeader.decode(value) else { throw ChunkFault.header }
        let payload = UnsafeRawBufferPointer(rebasing: value[ChunkHeader.size...])
        var raw: [UInt8]
        switch header.codec {
        case .raw:
            raw = [UInt8](payload)
        case .zstd:
            guard header.rawLength <= 1 << 30 else { throw ChunkFault.header }
            raw = [UInt8](repeating: 0, count: header.rawLength)
            let ok = raw.withUnsafeMutableBytes {
                ZstdCodec.decompress(payload, into: $0, expectedCount: header.rawLength)
            }
            guard ok else { throw ChunkFault.decompression }
        }
        if let expected, ContentDigest(of: raw) != expected { throw ChunkFault.checksum }
        return raw
    }

    /// Why a chunk could not be read.
    enum ChunkFault: Error, CustomStringConvertible {
        case missing, header, decompression, checksum

        var description: String {
            switch self {
            case .missing: "a chunk is missing"
            case .header: "a chunk header is invalid"
            case .decompression: "a chunk does not decompress"
            case .checksum: "a chunk fails its checksum"
            }
        }
    }
}
