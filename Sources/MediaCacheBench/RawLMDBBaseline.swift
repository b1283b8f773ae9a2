import CLMDB
import Foundation

/// The `raw-lmdb` baseline: the LMDB C API used directly, the engine's
/// ceiling. One environment opened like the engine's
/// (`MDB_NOTLS | MDB_NOMETASYNC | MDB_NOSUBDIR`, so a commit costs the
/// same data fsync), one named database, each value one item written with
/// plain `mdb_put` and read with `mdb_get`.
final class RawLMDBBaseline {
    /// The data file (the lock file sits beside it as `<path>-lock`).
    let path: String
    private let environment: OpaquePointer
    private let database: MDB_dbi

    /// Opens (creating) the environment at the file `path`.
    init(path: String, mapSize: Int = 8 << 30) throws(Failure) {
        self.path = path
        var env: OpaquePointer?
        try Failure.check(mdb_env_create(&env), "mdb_env_create")
        guard let env else { throw Failure(code: ENOMEM, call: "mdb_env_create") }
        do throws(Failure) {
            try Failure.check(mdb_env_set_mapsize(env, mapSize), "mdb_env_set_mapsize")
            try Failure.check(mdb_env_set_maxdbs(env, 2), "mdb_env_set_maxdbs")
            let flags = UInt32(MDB_NOTLS | MDB_NOMETASYNC | MDB_NOSUBDIR)
            try Failure.check(mdb_env_open(env, path, flags, 0o644), "mdb_env_open")
            var txn: OpaquePointer?
            try Failure.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
            var dbi = MDB_dbi()
            let rc = mdb_dbi_open(txn, "values", UInt32(MDB_CREATE), &dbi)
            guard rc == MDB_SUCCESS else {
                mdb_txn_abort(txn)
                throw Failure(code: rc, call: "mdb_dbi_open")
            }
            try Failure.check(mdb_txn_commit(txn), "mdb_txn_commit")
            self.database = dbi
        } catch {
            mdb_env_close(env)
            throw error
        }
        self.environment = env
    }

    deinit {
        mdb_env_close(environment)
    }

    // MARK: Operations

    /// Runs `body` in one write transaction and commits it.
    func write(_ body: (Transaction) throws -> Void) throws {
        var txn: OpaquePointer?
        try Failure.check(mdb_txn_begin(environment, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw Failure(code: EINVAL, call: "mdb_txn_begin") }
        do {
            try body(Transaction(handle: txn, database: database))
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try Failure.check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    /// Runs `body` in one short read transaction.
    func read<R>(_ body: (Transaction) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Failure.check(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw Failure(code: EINVAL, call: "mdb_txn_begin") }
        defer { mdb_txn_abort(txn) }
        return try body(Transaction(handle: txn, database: database))
    }

    /// Stores `value` under `key` in its own transaction (one commit).
    func put(_ value: some ContiguousBytes, forKey key: some ContiguousBytes) throws {
        try write { try $0.put(value, forKey: key) }
    }

    /// A copy of the value under `key`, in its own read transaction.
    func data(forKey key: some ContiguousBytes) throws -> Data? {
        try read { transaction in try transaction.withValue(forKey: key) { $0.map { Data($0) } } }
    }

    /// Bytes of the data file in use: (last page number + 1) × page size,
    /// measured as the engine measures its own.
    func usedBytes() -> Int {
        var info = MDB_envinfo()
        mdb_env_info(environment, &info)
        var stat = MDB_stat()
        mdb_env_stat(environment, &stat)
        return (info.me_last_pgno + 1) * Int(stat.ms_psize)
    }

    // MARK: Transaction

    /// One transaction over the baseline's database; valid inside the
    /// closure that received it.
    struct Transaction {
        let handle: OpaquePointer
        let database: MDB_dbi

        func put(_ value: some ContiguousBytes, forKey key: some ContiguousBytes) throws {
            try key.withUnsafeBytes { keyBytes in
                try value.withUnsafeBytes { valueBytes in
                    var k = MDB_val(
                        mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                    var v = MDB_val(
                        mv_size: valueBytes.count, mv_data: UnsafeMutableRawPointer(mutating: valueBytes.baseAddress))
                    try Failure.check(mdb_put(handle, database, &k, &v, 0), "mdb_put")
                }
            }
        }

        /// Deletes `key`; returns whether it was there.
        @discardableResult
        func delete(forKey key: some ContiguousBytes) throws -> Bool {
            try key.withUnsafeBytes { keyBytes in
                var k = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                let rc = mdb_del(handle, database, &k, nil)
                if rc == MDB_NOTFOUND { return false }
                try Failure.check(rc, "mdb_del")
                return true
            }
        }

        /// Calls `body` with the stored bytes of `key` (in the map, no copy), or `nil`.
        func withValue<R>(forKey key: some ContiguousBytes, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
            try key.withUnsafeBytes { keyBytes in
                var k = MDB_val(
                    mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
                var v = MDB_val()
                let rc = mdb_get(handle, database, &k, &v)
                if rc == MDB_NOTFOUND { return try body(nil) }
                try Failure.check(rc, "mdb_get")
                return try body(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
            }
        }
    }

    // MARK: Failure

    /// An LMDB call that failed.
    struct Failure: Error, CustomStringConvertible {
        var code: Int32
        var call: String

        static func check(_ rc: Int32, _ call: String) throws(Failure) {
            if rc != MDB_SUCCESS { throw Failure(code: rc, call: call) }
        }

        var description: String {
            "\(call): \(String(cString: mdb_strerror(code))) (\(code))"
        }
    }
}

extension RawLMDBBaseline {
    /// The key of chunk `index` of entry `entry`: both big-endian, so
    /// an entry's chunks sort together and in order.
    static func chunkKey(entry: UInt32, index: Int) -> [UInt8] {
        withUnsafeBytes(of: entry.bigEndian) { Array($0) } + withUnsafeBytes(of: UInt32(index).bigEndian) { Array($0) }
    }
}
