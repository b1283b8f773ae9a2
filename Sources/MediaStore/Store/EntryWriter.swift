import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams one value into the store in pieces of any size.
///
/// Memory stays bounded: full chunks are committed in batches of about
/// 4 MiB to a hidden staging entry. ``finish()`` writes the rest and
/// publishes the entry atomically in one commit, replacing any previous
/// value; until then readers see the
/// previous value (or nothing). A writer dropped without ``finish()``
/// is cancelled, and one abandoned by a crash is cleaned up when the
/// store is next opened.
///
/// ```swift
/// let writer = try store.makeWriter(forKey: url)
/// for try await piece in download { try writer.append(piece) }
/// let info = try writer.finish()
/// ```
///
/// A writer is used from one thread (or task) at a time.
public final class EntryWriter {
    /// The key the value is written under.
    public let key: String
    /// The store, until the writer is finished or cancelled: a closed
    /// writer does not keep the store (and its LMDB environment) open.
    private var openStore: MediaStore?
    private let options: WriteOptions
    private let expectedLength: Int?
    private let hasher = StreamingHasher()
    private var buffer: [UInt8] = []
    private var queued: [[UInt8]] = []
    private var queuedBytes = 0
    private var stagingID: UInt64?
    private var chunksWritten = 0
    private var compress: Bool?
    /// Bytes appended so far.
    public private(set) var bytesWritten = 0

    init(store: MediaStore, key: String, options: WriteOptions, expectedLength: Int?) {
        self.openStore = store
        self.key = key
        self.options = options
        self.expectedLength = expectedLength
        buffer.reserveCapacity(store.configuration.chunkSize)
        store.markInUse(key)
    }

    deinit {
        cancel()
    }

    /// Forgets the store and lets its key be evicted again.
    private func close() {
        openStore?.unmarkInUse(key)
        openStore = nil
    }

    /// Appends bytes.
    ///
    /// - throws: ``StoreError/entryTooLarge(key:size:limit:)`` once the
    ///   value outgrows the store's size limit (the writer is then
    ///   cancelled), ``StoreError/writerClosed`` after finish or cancel.
    public func append(_ bytes: some ContiguousBytes) throws(StoreError) {
        guard openStore != nil else { throw .writerClosed }
        let failure = bytes.withUnsafeBytes { input -> StoreError? in
            do throws(StoreError) {
                try append(buffer: input)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    private func append(buffer input: UnsafeRawBufferPointer) throws(StoreError) {
        guard let store = openStore else { throw .writerClosed }
        guard input.count > 0 else { return }
        bytesWritten += input.count
        do {
            try store.checkFits(key: key, size: bytesWritten)
        } catch {
            cancel()
            throw error
        }
        if compress == nil { compress = !MediaSniffer.isCompressedMedia(input.prefix(16)) }
        hasher.update(input)
        let chunkSize = store.configuration.chunkSize
        var offset = 0
        while offset < input.count {
            let take = min(chunkSize - buffer.count, input.count - offset)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[offset..<offset + take]))
            offset += take
            if buffer.count == chunkSize {
                queued.append(buffer)
                queuedBytes += buffer.count
                buffer.removeAll(keepingCapacity: true)
                if queuedBytes >= MediaStore.writeBatchBytes { try flush() }
            }
        }
    }

    /// Commits the queued chunks to the staging entry.
    private func flush() throws(StoreError) {
        guard let store = openStore else { throw .writerClosed }
        guard !queued.isEmpty else { return }
        var attempt = compress ?? true
        do {
            try store.run {
                try store.write { transaction in
                    var record = try stagedRecord(in: transaction)
                    try putQueued(in: transaction, into: &record, compress: &attempt)
                    try transaction.index.saveStaging(record)
                    stagingIDCandidate = record.entryID
                }
            }
        } catch {
            cancel()
            throw error
        }
        stagingID = stagingIDCandidate
        compress = attempt
        chunksWritten += queued.count
        queued.removeAll()
        queuedBytes = 0
    }

    /// The staging record committed so far, or a new one (owned by this
    /// process) when nothing was committed yet.
    private func stagedRecord(in transaction: StoreTransaction) throws -> EntryRecord {
        if let stagingID {
            guard let existing = try transaction.index.stagingRecord(stagingID) else {
                throw StoreError.writerClosed
            }
            return existing
        }
        var record = transaction.newRecord(key: key, options: options, length: nil)
        record.ownerPID = getpid()
        return record
    }

    /// Puts the queued chunks into `record`'s entry, after the chunks committed before.
    private func putQueued(
        in transaction: StoreTransaction, into record: inout EntryRecord, compress attempt: inout Bool
    ) throws {
        for (offset, chunk) in queued.enumerated() {
            try chunk.withUnsafeBytes {
                try transaction.putPiece($0, entryID: record.entryID, index: chunksWritten + offset, compress: &attempt)
            }
            record.presentChunks += 1
            record.cachedBytes += chunk.count
        }
    }

    private var stagingIDCandidate: UInt64?

    /// Writes what is left and publishes the entry under ``key``, in one
    /// write transaction: the chunks not committed yet and the entry go
    /// into the store together, so a value that never filled a batch
    /// (most media segments) costs one commit.
    ///
    /// When it returns, the entry is committed, and so durable as far as
    /// the store's commits are: LMDB has synced the data before the commit
    /// returned, so a crash of the app keeps it; the store writes meta
    /// pages without a sync of their own (`MDB_NOMETASYNC`), so a crash of
    /// the operating system or a power loss before the next commit may
    /// undo the last commit (never corrupt the store).
    ///
    /// - throws: ``StoreError/lengthMismatch(key:expected:actual:)`` when
    ///   an expected length was given and not met.
    @discardableResult
    public func finish() throws(StoreError) -> EntryInfo {
        do {
            return try publish { _, _ in }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError(error)
        }
    }

    /// ``finish()``, and `body` in the same transaction: `body` gets a
    /// ``WriteBatch`` and the published entry's info (to hold that
    /// version, for instance), and what it does is committed with the
    /// entry, in the one commit. If `body` throws, nothing is published,
    /// the writer is cancelled and `body`'s error is thrown unchanged.
    ///
    /// `body` may run more than once when the map has to grow, or when a
    /// write sharing its commit fails (``MediaStore/performBatch(_:)``),
    /// so it must only talk to the batch.
    ///
    /// ```swift
    /// let writer = try store.makeWriter(forKey: url)
    /// for try await piece in download { try writer.append(piece) }
    /// try writer.finish { batch, info in
    ///     try batch.hold(url, by: "downloads", version: info.version)
    /// }
    /// ```
    ///
    /// - throws: what `body` threw, or a ``StoreError``.
    @discardableResult
    public func finish(with body: (WriteBatch, EntryInfo) throws -> Void) throws -> EntryInfo {
        try publish(then: body)
    }

    private func publish(then body: (WriteBatch, EntryInfo) throws -> Void) throws -> EntryInfo {
        guard let store = openStore else { throw StoreError.writerClosed }
        if let expectedLength, expectedLength != bytesWritten {
            cancel()
            throw StoreError.lengthMismatch(key: key, expected: expectedLength, actual: bytesWritten)
        }
        let inline = stagingID == nil && queued.isEmpty && buffer.count <= store.configuration.inlineLimit
        if !inline && !buffer.isEmpty {
            queued.append(buffer)
            queuedBytes += buffer.count
            buffer = []
        }
        let digest = hasher.finalize()
        let total = bytesWritten
        var attempt = compress ?? true
        var bodyError: (any Error)?
        let info: EntryInfo
        do {
            info = try store.run {
                try store.write { transaction in
                    bodyError = nil
                    let info: EntryInfo
                    if inline {
                        info = try transaction.putWhole(buffer, forKey: key, options: options)
                    } else {
                        info = try insert(in: transaction, digest: digest, length: total, compress: &attempt)
                    }
                    do {
                        try body(WriteBatch(transaction: transaction), info)
                    } catch let error as StoreError {
                        throw error
                    } catch let error as LMDBError {
                        throw error
                    } catch {
                        bodyError = error
                        throw error
                    }
                    return info
                }
            }
        } catch {
            cancel()
            if let bodyError { throw bodyError }
            throw error
        }
        queued = []
        buffer = []
        close()
        return info
    }

    /// Puts the chunks not committed yet into the staged record (or a new
    /// one) and inserts it, complete, under ``key``.
    private func insert(
        in transaction: StoreTransaction, digest: ContentDigest, length: Int, compress attempt: inout Bool
    )
        throws -> EntryInfo
    {
        guard let store = openStore else { throw StoreError.writerClosed }
        var record = try stagedRecord(in: transaction)
        try putQueued(in: transaction, into: &record, compress: &attempt)
        if let stagingID { try transaction.index.deleteStaging(stagingID) }
        record.length = length
        record.digest = digest
        record.isComplete = true
        record.ownerPID = 0
        record.created = transaction.now
        let expiry = options.expiry.resolve(
            now: Date(timeIntervalSince1970: transaction.now), defaultLifetime: store.configuration.defaultLifetime)
        return try transaction.insert(record, expiry: expiry).info()
    }

    /// Abandons the write and releases what was staged. Safe to call twice.
    public func cancel() {
        guard let store = openStore else { return }
        close()
        queued = []
        buffer = []
        guard let stagingID else { return }
        _ = try? store.run {
            try store.write { transaction in
                guard try transaction.index.stagingRecord(stagingID) != nil else { return }
                try transaction.releaseExtents(entryID: stagingID)
                try transaction.index.deleteStaging(stagingID)
            }
        }
    }
}

extension MediaStore {
    /// A writer that streams a value in under `key`.
    ///
    /// - parameter key: the entry's key; the value replaces any entry there when finished.
    /// - parameter options: metadata, expiry, pinning and cost of the new entry.
    /// - parameter expectedLength: when known, checked by ``EntryWriter/finish()``
    ///   and against the size limit up front.
    public func makeWriter(
        forKey key: String, options: WriteOptions = WriteOptions(), expectedLength: Int? = nil
    ) throws(StoreError) -> EntryWriter {
        guard !isReadOnly else { throw .readOnly }
        if let expectedLength { try checkFits(key: key, size: expectedLength) }
        return EntryWriter(store: self, key: key, options: options, expectedLength: expectedLength)
    }
}
