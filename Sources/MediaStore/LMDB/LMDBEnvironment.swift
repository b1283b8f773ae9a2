internal import CLMDB
import Foundation
import MediaSupport

/// Owns one `MDB_env`: opening, map growth and reader-slot hygiene.
///
/// Every transaction holds ``mapLock`` shared while it is alive, so that
/// ``growMap(minimum:)`` (which needs no active transaction in this
/// process, per `mdb_env_set_mapsize`) can take it exclusively.
// Unchecked: an MDB_env is thread-safe; `_mapSize` is guarded by `stateLock`.
final class LMDBEnvironment: @unchecked Sendable {
    let handle: OpaquePointer
    let isReadOnly: Bool
    let mapLock = ReadWriteLock()
    /// Set when the environment runs with `MDB_NOLOCK`: this process's own
    /// stand-in for LMDB's locks (``ProcessLocalLocks``).
    let processLocalLocks: ProcessLocalLocks?
    private let stateLock = NSLock()
    private var _mapSize: Int

    /// Opens the environment in `directory` (which must exist).
    ///
    /// - parameter mapSize: the map size to set, or `nil` to adopt the one
    ///   recorded in the file (what a second process such as a CLI does).
    /// - parameter processLocalLocking: open with `MDB_NOLOCK` and lock
    ///   within this process instead (``ProcessLocalLocks``); the caller
    ///   keeps other processes out.
    init(
        directory: String, mapSize: Int?, maxDatabases: Int, readOnly: Bool,
        processLocalLocking: Bool = LMDBEnvironment.platformNeedsProcessLocalLocking
    ) throws(LMDBError) {
        // LMDB: "Do not have open an LMDB database twice in the same
        // process at the same time" — closing the second would drop the
        // first one's fcntl locks. Refuse instead (EBUSY).
        let identity = Self.identity(ofDirectory: directory)
        guard Self.openFiles.withLock({ $0.insert(identity).inserted }) else { throw LMDBError(code: EBUSY) }
        var env: OpaquePointer?
        defer { if env == nil { Self.openFiles.withLock { _ = $0.remove(identity) } } }
        try LMDBError.check(mdb_env_create(&env))
        guard let handle = env else { throw LMDBError(code: ENOMEM) }
        do {
            if let mapSize {
                try LMDBError.check(mdb_env_set_mapsize(handle, mapSize))
            }
            try LMDBError.check(mdb_env_set_maxdbs(handle, MDB_dbi(maxDatabases)))
            try LMDBError.check(mdb_env_set_maxreaders(handle, 254))
            // NOTLS: reader slots belong to transactions, not threads, so
            // Swift concurrency and thread pools cannot leak slots.
            // NOMETASYNC: an OS crash may undo the last commit, never corrupt.
            // No WRITEMAP: on a full disk it turns errors into SIGBUS.
            var flags = UInt32(MDB_NOTLS | MDB_NOMETASYNC | MDB_NOSUBDIR)
            if readOnly { flags |= UInt32(MDB_RDONLY) }
            if processLocalLocking { flags |= UInt32(MDB_NOLOCK) }
            let path = directory + "/data.mdb"
            try LMDBError.check(mdb_env_open(handle, path, flags, 0o644))
        } catch {
            mdb_env_close(handle)
            env = nil
            throw error
        }
        self.handle = handle
        self.identity = identity
        self.isReadOnly = readOnly
        self.processLocalLocks = processLocalLocking ? ProcessLocalLocks() : nil
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        self._mapSize = info.me_mapsize
        // Reclaim the reader slots of processes that died mid-read.
        var dead: Int32 = 0
        mdb_reader_check(handle, &dead)
    }

    /// Whether LMDB's own locks are unusable here. On Apple platforms LMDB
    /// (tannerdsilva/CLMDB, LMDB 0.9.31 with no defines) locks with named
    /// POSIX semaphores (`sem_open("/MDB…")`), which the app sandbox
    /// refuses unless the name starts with an app group: always on iOS,
    /// tvOS, watchOS and visionOS, and on macOS in a sandboxed app (the
    /// sandbox sets `APP_SANDBOX_CONTAINER_ID`). Stores there run with
    /// `MDB_NOLOCK` and ``ProcessLocalLocks``: one process per store.
    static var platformNeedsProcessLocalLocking: Bool {
        #if os(iOS) || os(tvOS) || os(watchOS) || os(visionOS)
            true
        #elseif os(macOS)
            ProcessInfo.processInfo.environment["APP_SANDBOX_CONTAINER_ID"] != nil
        #else
            false
        #endif
    }

    deinit {
        close()
    }

    /// Set by ``close()``; read under ``mapLock`` (shared by every
    /// transaction, exclusive here), so no transaction begins after it.
    private(set) var isClosed = false

    /// Closes the environment: waits until no transaction of this process
    /// is active, frees the kept readers, closes `MDB_env` and forgets
    /// the file, so that a new environment can open it at once. New
    /// transactions fail with ``LMDBError/closed``. Safe to call twice.
    func close() {
        mapLock.lockExclusive()
        defer { mapLock.unlockExclusive() }
        guard !isClosed else { return }
        isClosed = true
        for reader in idleReaders.withLock({ readers in
            defer { readers = [] }
            return readers
        }) {
            mdb_txn_abort(reader)
        }
        mdb_env_close(handle)
        Self.openFiles.withLock { _ = $0.remove(identity) }
    }

    /// Device and inode of each directory with an open environment in
    /// this process (paths can differ through links; inodes cannot).
    private static let openFiles = Locked<Set<String>>([])
    private let identity: String

    /// Whether this process has an environment open in `directory`.
    static func isOpen(directory: String) -> Bool {
        let identity = identity(ofDirectory: directory)
        return openFiles.withLock { $0.contains(identity) }
    }

    private static func identity(ofDirectory directory: String) -> String {
        var info = stat()
        guard stat(directory, &info) == 0 else { return directory }
        return "\(info.st_dev):\(info.st_ino)"
    }

    /// Reset read transactions kept for reuse (they hold a reader slot
    /// but no snapshot, so they pin no pages).
    private let idleReaders = Locked<[OpaquePointer]>([])
    private static let idleReaderLimit = 8

    /// A reset read transaction to renew, if one is kept.
    func takeIdleReader() -> OpaquePointer? {
        idleReaders.withLock { $0.popLast() }
    }

    /// Keeps a reset read transaction for reuse, or frees it.
    func keepIdleReader(_ reader: OpaquePointer) {
        let kept = idleReaders.withLock { readers -> Bool in
            guard readers.count < Self.idleReaderLimit else { return false }
            readers.append(reader)
            return true
        }
        if !kept { mdb_txn_abort(reader) }
    }

    /// The current map size in bytes.
    var mapSize: Int {
        stateLock.withLock { _mapSize }
    }

    /// The largest key LMDB accepts (511 bytes by default).
    var maxKeySize: Int { Int(mdb_env_get_maxkeysize(handle)) }

    /// Grows the map to at least `minimum` bytes. Waits until no
    /// transaction of this process is active.
    func growMap(minimum: Int) throws(LMDBError) {
        mapLock.lockExclusive()
        defer { mapLock.unlockExclusive() }
        guard !isClosed else { throw .closed }
        let current = mapSize
        guard current < minimum else { return }
        try LMDBError.check(mdb_env_set_mapsize(handle, minimum))
        refreshMapSize()
    }

    /// Adopts a map size grown by another process (`MDB_MAP_RESIZED`).
    func adoptMapSize() throws(LMDBError) {
        mapLock.lockExclusive()
        defer { mapLock.unlockExclusive() }
        guard !isClosed else { throw .closed }
        try LMDBError.check(mdb_env_set_mapsize(handle, 0))
        refreshMapSize()
    }

    private func refreshMapSize() {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        stateLock.withLock { _mapSize = info.me_mapsize }
    }

    /// Bytes of the map in use: (last page number + 1) × page size.
    func usedBytes() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    /// The page size of the environment.
    var pageSize: Int {
        var stat = MDB_stat()
        mdb_env_stat(handle, &stat)
        return Int(stat.ms_psize)
    }

    /// The id of the last committed write transaction: it grows by one
    /// with every commit.
    var lastTransactionID: Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return info.me_last_txnid
    }

    /// Reader slots in use (live and stale).
    func readerCount() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(handle, &info)
        return Int(info.me_numreaders)
    }

    /// Clears the reader slots of dead processes; returns how many.
    @discardableResult
    func clearStaleReaders() -> Int {
        mapLock.lockShared()
        defer { mapLock.unlockShared() }
        guard !isClosed else { return 0 }
        var dead: Int32 = 0
        mdb_reader_check(handle, &dead)
        return Int(dead)
    }

    /// Flushes buffers to disk.
    func sync() throws(LMDBError) {
        try LMDBError.check(mdb_env_sync(handle, 1))
    }

    /// Writes a compacted copy of the environment to `path` (a file).
    func copyCompacted(to path: String) throws(LMDBError) {
        try LMDBError.check(mdb_env_copy2(handle, path, UInt32(MDB_CP_COMPACT)))
    }
}
