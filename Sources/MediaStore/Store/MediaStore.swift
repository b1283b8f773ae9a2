import Foundation
import MediaSupport

/// A content-addressed media cache on disk.
///
/// Maps cache keys (any string, such as a URL) to content cut into
/// checksummed, zstd-compressed, deduplicated chunks in one LMDB
/// environment. Entries may be written whole, streamed in, or filled
/// range by range in any order; they expire, and least-recently-used
/// entries are evicted to keep the store within its limits.
///
/// ```swift
/// let store = try MediaStore(directory: cacheURL)
/// try store.put(trackBytes, forKey: url.absoluteString)
/// let bytes = try store.data(forKey: url.absoluteString)
/// ```
///
/// A store is safe to use from any thread. Writes are serialized; reads
/// run in parallel, each in its own short transaction. Open one store per
/// directory per process (LMDB's rule); other processes may open it too.
// Unchecked: holds the LMDB environment (a C handle, thread-safe with MDB_NOTLS); mutable state is behind locks.
public final class MediaStore: @unchecked Sendable {
    /// The store's directory.
    public let directory: URL
    /// The configuration it was opened with.
    public let configuration: StoreConfiguration
    /// Whether it was opened read-only.
    public let isReadOnly: Bool

    let environment: LMDBEnvironment
    let databases: StoreDatabases
    let keySeed: UInt64
    /// The keys of an encrypted store (checked at open; during a rekey,
    /// the new keys with the replaced ones); `nil` for a plain one.
    var encryption: StoreEncryption? { engine.encryption }
    /// Held shared while open, so that compaction never swaps the file under it.
    let maintenanceLock: MaintenanceLock?
    /// The session marker of a read-write store (`nil` when read-only).
    private let session: StoreSession?
    /// Set once by ``close()``.
    private let closeState = Locked(CloseState.open)
    /// When opening found the store damaged and started it empty: why,
    /// and where the damaged files went; `nil` otherwise.
    public let recovery: StoreRecovery?
    /// How many sessions in a row had ended without closing the store
    /// (a crash, a kill, an exit that never released it) before this
    /// open. 0 for a read-only store, and not counted up while other
    /// processes have the store open.
    public let uncleanSessions: Int
    private let keyHash: (@Sendable (String) -> ContentDigest)?
    /// Held by the write transaction (the leader of a group of writes).
    let writerLock = NSLock()
    /// Held while a rekey starts (``rekey(to:options:)``).
    let rekeyStart = NSLock()
    /// The writes waiting to share the next commit.
    let writeGroups = WriteGroups<PendingWrite>()
    /// What each transaction's engine gets instead of the store: set at
    /// open, and again when a rekey starts and when it ends.
    private let engineState: Locked<EngineContext>
    /// What the next transaction's engine gets.
    var engine: EngineContext { engineState.withLock { $0 } }
    /// Entries read since the last write, applied in batches.
    let pendingAccess = Locked(AccessLog(capacity: MediaStore.accessBatchSize))
    /// Keys being read or written in this process; never evicted.
    let keysInUse = Locked<[ExactKey: Int]>([:])
    /// Chunks this instance verified, so that reading them again skips the hash.
    let verifiedChunks: VerifiedChunks
    /// Observers of the entries the store removes by itself, by id.
    let removalObservers = Locked<(nextID: UInt64, observers: [UInt64: @Sendable ([StoreRemoval]) -> Void])>((0, [:]))

    /// Entries read past this many pending access times trigger a background write.
    static let accessBatchSize = 2048
    private let accessFlushQueue = DispatchQueue(label: "MediaStore.accessFlush", qos: .utility)
    private let flushScheduled = Locked(false)
    /// Streamed writes commit at least this often (bounds memory: the
    /// queued chunks plus LMDB's dirty pages of one commit).
    static let writeBatchBytes = 4 << 20
    /// Whole values up to this size are written in one transaction; larger
    /// ones are streamed (LMDB 0.9.24 leaks on very large single puts, and a
    /// transaction's dirty pages are held in memory until it commits).
    static let singleTransactionBytes = 16 << 20

    /// Opens the store in `directory`, creating it when missing.
    ///
    /// - throws: ``StoreError/notAStore(path:reason:)`` when the directory
    ///   holds something else, ``StoreError/unsupportedFormatVersion(found:supported:)``
    ///   for a newer store, ``StoreError/inaccessible(path:reason:)`` when
    ///   it cannot be created or written, ``StoreError/damagedStore(reason:)``
    ///   for a damaged store file another process has open (with nobody
    ///   else using it, a damaged store is moved aside and an empty one
    ///   created instead: ``recovery``). Nothing else is deleted: of the
    ///   damaged copies set aside, the newest ``keptDamagedCopies`` are kept.
    public convenience init(directory: URL, configuration: StoreConfiguration = StoreConfiguration()) throws(StoreError)
    {
        try self.init(directory: directory, configuration: configuration, readOnly: false, keyHash: nil)
    }

    /// Opens an existing store for reading only, as a second process
    /// (such as `cachetool`) does while an app writes. Adopts the map
    /// size the writer chose.
    public static func openReadOnly(directory: URL) throws(StoreError) -> MediaStore {
        try MediaStore(directory: directory, configuration: StoreConfiguration(), readOnly: true, keyHash: nil)
    }

    /// Opens an existing store for reading only, with the key of an
    /// encrypted store (`nil` for a plain one); see ``openReadOnly(directory:)``.
    ///
    /// - throws: ``StoreError/wrongKey(path:)`` or
    ///   ``StoreError/encryptionMismatch(path:storeIsEncrypted:)`` when the
    ///   key does not fit the store, besides the errors of ``openReadOnly(directory:)``.
    public static func openReadOnly(directory: URL, key: StoreKey?) throws(StoreError) -> MediaStore {
        var configuration = StoreConfiguration()
        configuration.encryption = key.map { StoreConfiguration.Encryption(key: $0) }
        return try MediaStore(directory: directory, configuration: configuration, readOnly: true, keyHash: nil)
    }

    /// - parameter processLocalLocking: `MDB_NOLOCK` with locks kept in
    ///   this process, and other processes kept out (the default on iOS,
    ///   tvOS, watchOS, visionOS and in a sandboxed macOS app; tests use
    ///   it on Linux).
    init(
        directory: URL, configuration: StoreConfiguration, readOnly: Bool,
        keyHash: (@Sendable (String) -> ContentDigest)?,
        processLocalLocking: Bool = LMDBEnvironment.platformNeedsProcessLocalLocking
    ) throws(StoreError) {
        precondition(configuration.chunkSize > 0 && configuration.chunkSize <= 1 << 30, "chunkSize out of range")
        self.directory = directory
        self.configuration = configuration
        self.isReadOnly = readOnly
        self.keyHash = keyHash
        self.verifiedChunks = VerifiedChunks(capacity: configuration.verifiedChunkMemory)
        // One still open in this process is refused at once (LMDB would
        // refuse it too, after the session marker's probe waited up to
        // 63 ms for that store's maintenance lock).
        if LMDBEnvironment.isOpen(directory: directory.path) { throw .alreadyOpen(path: directory.path) }
        var opener = StoreOpener(directory: directory, configuration: configuration, readOnly: readOnly)
        opener.processLocalLocking = processLocalLocking
        // Without LMDB's locks nothing else may have the store open.
        func maintenanceLock(evenWithoutStore: Bool) throws(StoreError) -> MaintenanceLock? {
            processLocalLocking
                ? try MaintenanceLock.sole(directory: directory, create: !readOnly)
                : MaintenanceLock.shared(directory: directory, evenWithoutStore: evenWithoutStore)
        }
        let opened: StoreOpener.Opened
        if readOnly {
            self.maintenanceLock = try maintenanceLock(evenWithoutStore: false)
            opened = try opener.open()
            (self.session, self.recovery, self.uncleanSessions) = (nil, nil, 0)
        } else {
            let started = try opener.startSession()
            defer { started.session?.unlock() }
            do {
                self.maintenanceLock = try maintenanceLock(evenWithoutStore: true)
                opened = try opener.open()
            } catch {
                started.session?.restore(started.previous)
                throw error
            }
            (self.session, self.recovery, self.uncleanSessions) =
                (started.session, started.recovery, started.uncleanSessions)
        }
        self.environment = opened.environment
        self.databases = opened.databases
        self.keySeed = opened.keySeed
        let keySeed = opened.keySeed
        let keysInUse = keysInUse
        self.engineState = Locked(
            EngineContext(
                configuration: configuration,
                keyDigest: { key in Self.keyDigest(key, hash: keyHash, seed: keySeed, encryption: opened.encryption) },
                codec: Locked(ZstdCodec(level: max(1, configuration.compressionLevel))),
                isInUse: { key in keysInUse.withLock { $0[ExactKey(key)] != nil } },
                verifiedChunks: verifiedChunks, encryption: opened.encryption))
        if !readOnly {
            try run { try removeAbandonedStaging() }
        }
    }

    deinit {
        close()
    }

    /// The 16-byte digest that addresses `key` in the index.
    func keyDigest(_ key: String) -> ContentDigest {
        Self.keyDigest(key, hash: keyHash, seed: keySeed, encryption: encryption)
    }

    /// Makes the following transactions use `encryption` (when a rekey
    /// starts or ends). Call it after the commit that wrote the change.
    func useKeys(_ encryption: StoreEncryption) {
        let (keyHash, keySeed) = (keyHash, keySeed)
        engineState.withLock { engine in
            engine = EngineContext(
                configuration: engine.configuration,
                keyDigest: { key in Self.keyDigest(key, hash: keyHash, seed: keySeed, encryption: encryption) },
                codec: engine.codec, isInUse: engine.isInUse, verifiedChunks: engine.verifiedChunks,
                encryption: encryption)
        }
    }

    /// XXH3-128 of the key, seeded with the store's seed; in an encrypted
    /// store a MAC of the key (``StoreEncryption/indexKey(forCacheKey:)``),
    /// so that the file confirms no guessed key.
    private static func keyDigest(
        _ key: String, hash: (@Sendable (String) -> ContentDigest)?, seed: UInt64, encryption: StoreEncryption?
    ) -> ContentDigest {
        if let hash { return hash(key) }
        if let encryption { return encryption.indexKey(forCacheKey: key) }
        var key = key
        return key.withUTF8 { ContentDigest(of: UnsafeRawBufferPointer($0), seed: seed) }
    }

    // MARK: Transactions

    /// Runs `body` and maps every failure to a ``StoreError``.
    func run<R>(_ body: () throws -> R) throws(StoreError) -> R {
        do {
            return try body()
        } catch {
            throw StoreError(error)
        }
    }

    /// Runs `body` in a read transaction.
    func read<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        let transaction = try StoreTransaction(
            environment: environment, databases: databases, context: engine, write: false)
        defer { transaction.abort() }
        return try body(transaction)
    }

    /// Puts back the access times a failed write took out (the latest
    /// time of a slot wins, whatever order they are noted in).
    func restoreAccessTimes(_ log: AccessLog) {
        pendingAccess.withLock { $0.merge(log) }
    }

    // MARK: In-use keys

    func markInUse(_ key: String) {
        keysInUse.withLock { $0[ExactKey(key), default: 0] += 1 }
    }

    func unmarkInUse(_ key: String) {
        let key = ExactKey(key)
        keysInUse.withLock { keys in
            let count = (keys[key] ?? 1) - 1
            keys[key] = count > 0 ? count : nil
        }
    }

    /// Notes a read of the entry at `slot` at `now` (seconds since 1970:
    /// the read transaction's clock, so a read asks the clock once). Reads
    /// never write: the time is applied with the next write, or by a
    /// background flush once the log holds ``accessBatchSize`` entries
    /// read (after compaction: reads of one entry count once), off the
    /// reader's thread.
    func recordAccess(slot: Slot, at now: Double) {
        guard !isReadOnly else { return }
        let shouldFlush = pendingAccess.withLock { pending in
            pending.note(slot, at: now)
            return pending.count >= Self.accessBatchSize
        }
        if shouldFlush
            && flushScheduled.withLock({ scheduled in
                defer { scheduled = true }
                return !scheduled
            })
        {
            accessFlushQueue.async { [weak self] in
                guard let self else { return }
                self.flushScheduled.withLock { $0 = false }
                try? self.flushAccessTimes()
            }
        }
    }

    var closeStateValue: CloseState {
        closeState.withLock { $0 }
    }

    /// Moves the store from open to closing; `false` when it already was.
    func beginClosing() -> Bool {
        closeState.withLock { state in
            guard state == .open else { return false }
            state = .closing
            return true
        }
    }

    /// Ends the store once its last access times are written: no writer
    /// after this, the environment closed once no read is under way,
    /// the maintenance lock dropped and, when no other process has the
    /// store open, the session marked closed.
    func finishClosing() {
        writerLock.withLock { closeState.withLock { $0 = .closed } }
        environment.close()
        maintenanceLock?.release()
        if let session {
            session.relock()
            if session.isSoleOpener() { session.write(.closed) }
            session.unlock()
        }
    }

    /// Waits until a background flush of access times has run (tests).
    func waitForAccessFlush() {
        accessFlushQueue.sync {}
    }

    /// Writes the batched last-access times of recent reads. Done by
    /// every write and in the background every 2,048 reads; call it before
    /// handing the store to another process if LRU order matters there.
    public func flushAccessTimes() throws(StoreError) {
        guard !isReadOnly else { return }
        // Looked at under the writer lock: a write under way holds the
        // times it took out of the log until it commits them (or puts them
        // back), so an empty log seen outside it proves nothing.
        guard !writerLock.withLock({ pendingAccess.withLock { $0.isEmpty } }) else { return }
        try run { try write { _ in } }
    }
}
