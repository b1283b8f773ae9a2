internal import CLMDB
import Foundation

/// Owns one `MDB_txn`. Aborted on deinit unless committed.
///
/// A transaction is used by one thread at a time and never outlives the
/// call that made it: the store opens one per operation (or per chunk when
/// streaming), so no reader pins old pages for long.
final class LMDBTransaction {
    private(set) var handle: OpaquePointer?
    let environment: LMDBEnvironment
    let isReadOnly: Bool
    /// The snapshot a reader registered with the environment's
    /// ``ProcessLocalLocks`` (only under `MDB_NOLOCK`).
    private var registeredSnapshot: Int?

    /// Begins a transaction. Holds the environment's map lock shared until
    /// the transaction ends.
    init(environment: LMDBEnvironment, readOnly: Bool) throws(LMDBError) {
        self.environment = environment
        self.isReadOnly = readOnly
        var attempt = 0
        let locks = environment.processLocalLocks
        while true {
            environment.mapLock.lockShared()
            if environment.isClosed {
                environment.mapLock.unlockShared()
                throw LMDBError.closed
            }
            var txn: OpaquePointer?
            var rc: Int32 = MDB_SUCCESS
            // A local function, not a closure value: nothing escapes, so
            // the default path (no local locks) allocates nothing for it.
            func begin() {
                if readOnly, let idle = environment.takeIdleReader() {
                    // Renewing a reset reader skips the allocation and the
                    // reader-table lock of mdb_txn_begin.
                    rc = mdb_txn_renew(idle)
                    if rc == MDB_SUCCESS { txn = idle } else { mdb_txn_abort(idle) }
                } else {
                    let flags = readOnly ? UInt32(MDB_RDONLY) : 0
                    rc = mdb_txn_begin(environment.handle, nil, flags, &txn)
                }
            }
            if let locks, readOnly {
                registeredSnapshot = locks.beginReader {
                    begin()
                    return txn.map { Int(mdb_txn_id($0)) }
                }
            } else if let locks {
                locks.beginWriter()
                begin()
                if let txn { locks.waitForOlderReaders(newest: Int(mdb_txn_id(txn)) - 1) } else { locks.endWriter() }
            } else {
                begin()
            }
            if rc == MDB_SUCCESS, let txn {
                handle = txn
                return
            }
            environment.mapLock.unlockShared()
            if rc == MDB_MAP_RESIZED && attempt < 3 {
                attempt += 1
                try environment.adoptMapSize()
                continue
            }
            if rc == MDB_READERS_FULL && attempt < 3 {
                attempt += 1
                environment.clearStaleReaders()
                continue
            }
            throw LMDBError(code: rc)
        }
    }

    deinit {
        abort()
    }

    /// Commits the transaction.
    func commit() throws(LMDBError) {
        guard let txn = handle else { return }
        handle = nil
        let rc = mdb_txn_commit(txn)
        endLocalLocks()
        environment.mapLock.unlockShared()
        try LMDBError.check(rc)
    }

    /// Abandons the transaction; safe to call twice. A reader is reset
    /// and kept for reuse rather than freed.
    func abort() {
        guard let txn = handle else { return }
        handle = nil
        if isReadOnly {
            mdb_txn_reset(txn)
            environment.keepIdleReader(txn)
        } else {
            mdb_txn_abort(txn)
        }
        endLocalLocks()
        environment.mapLock.unlockShared()
    }

    /// Under `MDB_NOLOCK`: unregisters the reader, or ends the writer.
    private func endLocalLocks() {
        guard let locks = environment.processLocalLocks else { return }
        if let snapshot = registeredSnapshot {
            registeredSnapshot = nil
            locks.endReader(snapshot: snapshot)
        } else if !isReadOnly {
            locks.endWriter()
        }
    }

    /// Opens (or, in a write transaction, creates) a named database.
    func openDatabase(_ name: String, create: Bool) throws(LMDBError) -> LMDBDatabase {
        var dbi = MDB_dbi()
        let flags = create ? UInt32(MDB_CREATE) : 0
        try LMDBError.check(mdb_dbi_open(handle, name, flags, &dbi))
        return LMDBDatabase(handle: dbi)
    }

    /// Opens the unnamed (main) database, which holds the names of the
    /// others (and the data of a file that uses no named databases).
    func openMainDatabase() throws(LMDBError) -> LMDBDatabase {
        var dbi = MDB_dbi()
        try LMDBError.check(mdb_dbi_open(handle, nil, 0, &dbi))
        return LMDBDatabase(handle: dbi)
    }

    /// Calls `body` with the value stored under `key`, or `nil`. The
    /// buffer is valid only inside `body`.
    func withValue<R>(
        _ database: LMDBDatabase, key: some ContiguousBytes,
        _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        try key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val()
            let rc = mdb_get(handle, database.handle, &k, &v)
            if rc == MDB_NOTFOUND { return try body(nil) }
            try LMDBError.check(rc)
            return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        }
    }

    /// The value stored under `key`, copied, or `nil`.
    func value(_ database: LMDBDatabase, key: some ContiguousBytes) throws -> [UInt8]? {
        try withValue(database, key: key) { buffer in buffer.map { [UInt8]($0) } }
    }

    /// Stores `value` under `key`.
    ///
    /// - parameter append: `key` is greater than every key in `database`
    ///   (`MDB_APPEND`): LMDB then fills pages completely instead of
    ///   splitting them in the middle. When it is not,
    ///   ``LMDBError/keyExists`` is thrown and nothing is written.
    func put(
        _ database: LMDBDatabase, key: some ContiguousBytes, value: some ContiguousBytes, append: Bool = false
    ) throws(LMDBError) {
        let rc = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { valueBytes in
                var k = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val(
                    mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                return mdb_put(handle, database.handle, &k, &v, append ? UInt32(MDB_APPEND) : 0)
            }
        }
        try LMDBError.check(rc)
    }

    /// Reserves `count` bytes under `key` and lets `fill` write them in
    /// place (`MDB_RESERVE`), saving one copy of large values.
    /// `append` as in ``put(_:key:value:append:)``.
    func putReserved(
        _ database: LMDBDatabase, key: some ContiguousBytes, count: Int, append: Bool = false,
        fill: (UnsafeMutableRawBufferPointer) -> Void
    ) throws(LMDBError) {
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            var v = MDB_val(mv_size: count, mv_data: nil)
            let flags = UInt32(MDB_RESERVE) | (append ? UInt32(MDB_APPEND) : 0)
            let rc = mdb_put(handle, database.handle, &k, &v, flags)
            if rc == MDB_SUCCESS {
                fill(UnsafeMutableRawBufferPointer(start: v.mv_data, count: count))
            }
            return rc
        }
        try LMDBError.check(rc)
    }

    /// Deletes `key`; returns whether it existed.
    @discardableResult
    func delete(_ database: LMDBDatabase, key: some ContiguousBytes) throws(LMDBError) -> Bool {
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_del(handle, database.handle, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try LMDBError.check(rc)
        return true
    }

    /// Removes every record of `database`.
    func clear(_ database: LMDBDatabase) throws(LMDBError) {
        try LMDBError.check(mdb_drop(handle, database.handle, 0))
    }

    /// Deletes `database` itself from the environment (its name too); its
    /// handle is invalid afterwards.
    func dropDatabase(_ database: LMDBDatabase) throws(LMDBError) {
        try LMDBError.check(mdb_drop(handle, database.handle, 1))
    }

    /// Number of records in `database`.
    func count(_ database: LMDBDatabase) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try LMDBError.check(mdb_stat(handle, database.handle, &stat))
        return Int(stat.ms_entries)
    }

    /// Opens a cursor on `database`, valid until this transaction ends.
    func cursor(_ database: LMDBDatabase) throws(LMDBError) -> LMDBCursor {
        try LMDBCursor(transaction: self, database: database)
    }
}

/// A named database handle inside an environment.
struct LMDBDatabase: Sendable {
    let handle: MDB_dbi
}
