import Foundation

extension MediaStore {
    /// Makes sure a (possibly partial) entry exists for `key`, to be
    /// filled range by range with ``write(_:at:forKey:version:)`` using
    /// the returned ``EntryInfo/version``.
    ///
    /// An existing entry is kept (same version) only when it describes the
    /// same content:
    /// - its length agrees with `length` (an unknown length on either side
    ///   agrees, as long as every chunk already cached lies within
    ///   `length`; an entry of unknown length then takes `length` on, with
    ///   its version unchanged);
    /// - each validator given in `options.metadata` (`etag`,
    ///   `lastModified`) equals the stored one (a validator not given agrees
    ///   with any; one given where the entry has none does not);
    /// - it has not expired, and is not an inline value.
    ///
    /// Otherwise it is replaced by an empty entry with a new version: fills
    /// still running against the old version then fail with
    /// ``StoreError/entryReplaced(key:expected:found:)`` instead of mixing
    /// two contents in one entry. The other options apply only to a new
    /// entry.
    ///
    /// - parameter key: the entry's key.
    /// - parameter length: the total length, or `nil` when not yet known.
    /// - parameter options: the validators the entry must match, and the
    ///   metadata, expiry and pinning of a new entry.
    @discardableResult
    public func prepareEntry(
        forKey key: String, length: Int?, options: WriteOptions = WriteOptions()
    ) throws(StoreError) -> EntryInfo {
        if let length {
            guard length >= 0 else { throw .invalidRange(key: key, range: 0..<0, length: length) }
            try checkFits(key: key, size: length)
        }
        markInUse(key)
        defer { unmarkInUse(key) }
        return try run {
            try write { transaction in
                if let (_, record) = try transaction.index.find(key),
                    try transaction.canReuse(record, length: length, metadata: options.metadata)
                {
                    if record.length == nil, let length {
                        return try transaction.setLength(length, forKey: key).info()
                    }
                    return record.info()
                }
                var record = transaction.newRecord(key: key, options: options, length: length)
                if length == 0 {
                    record.isComplete = true
                    record.digest = ContentDigest(of: [UInt8]())
                }
                let expiry = options.expiry.resolve(
                    now: Date(timeIntervalSince1970: transaction.now), defaultLifetime: configuration.defaultLifetime)
                return try transaction.insert(record, expiry: expiry).info()
            }
        }
    }

    /// Writes `bytes` at `offset` into version `version` of the entry for
    /// `key`, as returned by ``prepareEntry(forKey:length:options:)``.
    ///
    /// `offset` must be a multiple of the chunk size, or within the bytes
    /// of a chunk already stored (the write continues that chunk after its
    /// first `offset % chunkSize` bytes, which are of the same version). On an
    /// entry of known length the write may end anywhere within the entry:
    /// a chunk it leaves short keeps the bytes received, readable and
    /// counted in ``cachedRanges(forKey:)``, until a later write continues
    /// or replaces it. On an entry of unknown length the write must end on
    /// a chunk boundary, or fixes the length there, and so does an empty
    /// write (the content ends at `offset`).
    /// Chunks already present are kept (a short one gives way to a longer
    /// one). When the last hole is filled the entry becomes complete and
    /// its content digest is computed.
    ///
    /// - throws: ``StoreError/entryReplaced(key:expected:found:)`` when the
    ///   entry for `key` is no longer version `version` (replaced, removed,
    ///   evicted, or expired and replaced): nothing is written, and the
    ///   bytes belong to no entry of the store any more.
    @discardableResult
    public func write(
        _ bytes: some ContiguousBytes, at offset: Int, forKey key: String, version: UInt64
    ) throws(StoreError) -> EntryInfo {
        markInUse(key)
        defer { unmarkInUse(key) }
        return try run {
            try write { transaction in
                let (slot, found) = try transaction.findEntry(key, version: version)
                // An inline value (from put) is no entry to fill range by range.
                guard !found.isUnchunked else { throw StoreError.notFound(key: key) }
                var record = found
                return try bytes.withUnsafeBytes { buffer in
                    try transaction.fill(&record, slot: slot, bytes: buffer, at: offset)
                    return record.info()
                }
            }
        }
    }

    /// The byte ranges of `key` that are cached, in order and merged;
    /// empty when there is no entry.
    public func cachedRanges(forKey key: String) throws(StoreError) -> [Range<Int>] {
        try run {
            try read { transaction in
                guard let (_, record) = try transaction.index.find(key) else { return [] }
                if record.isUnchunked { return record.unchunkedLength == 0 ? [] : [0..<record.unchunkedLength] }
                // Chunk i holds bytes of i * chunkSize..<(i + 1) * chunkSize
                // only, so chunks holding `length` bytes of a `length`-byte
                // entry leave no hole: no need to walk them.
                if let length = record.length, record.cachedBytes == length {
                    return length == 0 ? [] : [0..<length]
                }
                var ranges: [Range<Int>] = []
                for (index, length) in try transaction.extents.lengths(entryID: record.entryID) {
                    let start = index * record.chunkSize
                    if let last = ranges.last, last.upperBound == start {
                        ranges[ranges.count - 1] = last.lowerBound..<(start + length)
                    } else {
                        ranges.append(start..<(start + length))
                    }
                }
                return ranges
            }
        }
    }

    /// Reads `range` of the entry for `key`, complete or partial. Touches
    /// only the chunks the range needs, in one short transaction.
    ///
    /// - parameter key: the entry's key.
    /// - parameter range: the bytes to read, within the entry's length.
    /// - parameter includeExpired: read an expired entry too (for
    ///   revalidation); otherwise an expired entry is a miss.
    /// - throws: ``StoreError/notFound(key:)``, ``StoreError/invalidRange(key:range:length:)``,
    ///   ``StoreError/rangeNotCached(key:missing:)``, ``StoreError/corrupted(key:reason:)``.
    public func read(forKey key: String, range: Range<Int>, includeExpired: Bool = false) throws(StoreError) -> Data {
        let result: (slot: Slot, now: Double, data: Data)
        do {
            result = try run {
                try read { transaction in
                    let (slot, record, known) = try entryToRead(
                        key, in: transaction, includeExpired: includeExpired, entryID: nil)
                    guard range.lowerBound >= 0, known.map({ range.upperBound <= $0 }) ?? true else {
                        throw StoreError.invalidRange(key: key, range: range, length: known)
                    }
                    return (slot, transaction.now, try transaction.readRange(record, range))
                }
            }
        } catch {
            throw dropIfCorrupt(key: key, error)
        }
        recordAccess(slot: result.slot, at: result.now)
        return result.data
    }

    /// The entry at `key` as a read in `transaction` may use it, with its
    /// length when known.
    ///
    /// - throws: `notFound` when there is none (or it expired, unless
    ///   `includeExpired`); `changedDuringRead` when `entryID` is given and
    ///   the entry is no longer that one.
    private func entryToRead(
        _ key: String, in transaction: StoreTransaction, includeExpired: Bool, entryID: UInt64?
    ) throws -> (slot: Slot, record: EntryRecord, known: Int?) {
        guard let (slot, record) = try transaction.index.find(key, currentAccess: false),
            includeExpired || !record.isExpired(at: transaction.now)
        else { throw StoreError.notFound(key: key) }
        if let entryID, record.entryID != entryID { throw StoreError.changedDuringRead(key: key) }
        return (slot, record, record.length ?? (record.isUnchunked ? record.unchunkedLength : nil))
    }

    /// Streams `range` of an entry to `body` one chunk at a time. The
    /// chunks are copied out up to 256 KiB per short read transaction
    /// (whole chunks, at least one), and `body` runs outside it, so that no
    /// reader pins pages for the whole stream or while `body` works. The
    /// entry is protected from eviction meanwhile. Filling holes of the
    /// entry meanwhile is fine (a hole ends a transaction's chunks; the
    /// next one looks again); if it is replaced (or removed) mid-stream,
    /// the chunks already copied out of the old version are handed out and
    /// the read then stops with ``StoreError/changedDuringRead(key:)`` (or
    /// `notFound`), so the bytes handed out never mix two versions.
    ///
    /// - parameter key: the entry's key.
    /// - parameter range: the bytes to read, within the entry's length.
    /// - parameter includeExpired: read an expired entry too (for revalidation).
    /// - parameter version: the ``EntryInfo/version`` the caller sized the
    ///   range from; when given, an entry replaced since then stops the
    ///   read before the first chunk.
    /// - parameter body: called with each chunk's bytes of the range, in
    ///   order; an error it throws stops the read and is rethrown.
    public func read(
        forKey key: String, range: Range<Int>, includeExpired: Bool = false, version: UInt64? = nil,
        chunkHandler body: (Data) throws -> Void
    ) throws {
        var handlerError: (any Error)?
        try forEachSlice(forKey: key, range: range, includeExpired: includeExpired, version: version) { data in
            do {
                try body(data)
                return true
            } catch {
                handlerError = error
                return false
            }
        }
        if let handlerError { throw handlerError }
    }

    /// ``read(forKey:range:includeExpired:version:chunkHandler:)`` with a
    /// handler that cannot fail (it returns `false` to stop), so that every
    /// error is a ``StoreError``.
    ///
    /// The chunks are read up to ``sliceBytesPerTransaction`` per read
    /// transaction (each its own `Data`), then handed to `body` outside it:
    /// no snapshot held while `body` runs, and with small chunks, one
    /// lookup of the entry for several.
    package func forEachSlice(
        forKey key: String, range: Range<Int>, includeExpired: Bool = false, version: UInt64? = nil,
        _ body: (Data) -> Bool
    ) throws(StoreError) {
        markInUse(key)
        defer { unmarkInUse(key) }
        var position = range.lowerBound
        var entryID = version
        var expiredToo = includeExpired
        repeat {
            let group = try readSlices(
                forKey: key, range: position..<range.upperBound, includeExpired: expiredToo, entryID: entryID)
            // Later groups read the entry the first one found, expired since or not.
            entryID = group.entryID
            expiredToo = true
            for slice in group.slices {
                guard body(slice) else { return }
            }
            position = group.end
        } while position < range.upperBound
    }

    /// Most bytes ``forEachSlice(forKey:range:includeExpired:version:_:)``
    /// copies out in one read transaction (whole chunks or their parts in
    /// the range, at least one): one chunk of the default size.
    ///
    /// Small on purpose: each chunk is copied into a new buffer, and a
    /// slice handed out and dropped gives its buffer back to `malloc`,
    /// which hands it to the next copy while its lines are still in the
    /// core's cache. One default chunk per transaction serves a cached
    /// entry faster than four (docs/performance.md has the loader's rate
    /// against `read(2)`).
    static let sliceBytesPerTransaction = 1 << 18

    /// Reads the chunk slices of `range` from its start, up to
    /// ``sliceBytesPerTransaction`` bytes, in one transaction (an empty
    /// `range` only looks the entry up); when `entryID` is given, the
    /// entry must still be that one.
    ///
    /// - returns: one `Data` per chunk touched, the entry's id, and where the group ended.
    private func readSlices(
        forKey key: String, range: Range<Int>, includeExpired: Bool, entryID: UInt64?
    ) throws(StoreError) -> (slices: [Data], entryID: UInt64, end: Int) {
        let result: (slot: Slot, now: Double, slices: [Data], entryID: UInt64, end: Int)
        do {
            result = try run {
                try read { transaction in
                    let (slot, record, known) = try entryToRead(
                        key, in: transaction, includeExpired: includeExpired, entryID: entryID)
                    let chunkSize = record.chunkSize
                    var slices: [Data] = []
                    var position = range.lowerBound
                    var copied = 0
                    while position < range.upperBound {
                        let end = min(range.upperBound, (position / chunkSize + 1) * chunkSize)
                        if copied > 0 && copied + (end - position) > Self.sliceBytesPerTransaction { break }
                        guard position >= 0, known.map({ end <= $0 }) ?? true else {
                            throw StoreError.invalidRange(key: key, range: position..<end, length: known)
                        }
                        let slice: Data
                        do {
                            slice = try transaction.readRange(record, position..<end)
                        } catch StoreError.rangeNotCached where !slices.isEmpty {
                            // A hole after what this group read: hand that
                            // out first; the next group looks again (it may
                            // be filled by then).
                            break
                        }
                        slices.append(slice)
                        copied += slice.count
                        position = end
                    }
                    return (slot, transaction.now, slices, record.entryID, position)
                }
            }
        } catch {
            throw dropIfCorrupt(key: key, error)
        }
        if !result.slices.isEmpty { recordAccess(slot: result.slot, at: result.now) }
        return (result.slices, result.entryID, result.end)
    }

    /// Marks `key` as in use until the lease is released (or dropped):
    /// eviction and expiry sweeps skip it. For a player filling an entry
    /// over time.
    public func lease(forKey key: String) -> EntryLease {
        EntryLease(store: self, key: key)
    }
}

/// Keeps an entry from being evicted or swept while alive.
public final class EntryLease: Sendable {
    /// The leased key.
    public let key: String
    private let store: MediaStore

    init(store: MediaStore, key: String) {
        self.store = store
        self.key = key
        store.markInUse(key)
    }

    deinit {
        store.unmarkInUse(key)
    }
}
