internal import CLMDB

/// Owns one `MDB_cursor`, closed on deinit. Valid only while its
/// transaction is alive.
final class LMDBCursor {
    private let handle: OpaquePointer
    private let transaction: LMDBTransaction

    init(transaction: LMDBTransaction, database: LMDBDatabase) throws(LMDBError) {
        var cursor: OpaquePointer?
        try LMDBError.check(mdb_cursor_open(transaction.handle, database.handle, &cursor))
        self.handle = cursor!
        self.transaction = transaction
    }

    deinit {
        // Cursors of write transactions are freed by LMDB at commit/abort
        // only when closed explicitly; closing after the transaction ended
        // is invalid for write cursors, so close while it is alive.
        if transaction.handle != nil || transaction.isReadOnly {
            mdb_cursor_close(handle)
        }
    }

    /// A key/value pair, copied out of the map.
    struct Record {
        var key: [UInt8]
        var value: [UInt8]
    }

    /// Moves the cursor and calls `body` with the key and value there,
    /// both pointing into the map (valid only inside `body`, nothing
    /// copied); `nil` when there is no such record.
    private func move<R>(
        _ op: MDB_cursor_op, key: [UInt8]? = nil,
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        var k = MDB_val()
        var v = MDB_val()
        let rc: Int32
        if let key {
            rc = key.withUnsafeBytes { bytes in
                k = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(handle, &k, &v, op)
            }
        } else {
            rc = mdb_cursor_get(handle, &k, &v, op)
        }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        return try body(
            UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size),
            UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
    }

    private func get(_ op: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> Record? {
        do {
            return try move(op, key: key) { key, value in Record(key: [UInt8](key), value: [UInt8](value)) }
        } catch let error as LMDBError {
            throw error
        } catch {
            preconditionFailure("unreachable: the body does not throw")
        }
    }

    private func getKey(_ op: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> [UInt8]? {
        do {
            return try move(op, key: key) { key, _ in [UInt8](key) }
        } catch let error as LMDBError {
            throw error
        } catch {
            preconditionFailure("unreachable: the body does not throw")
        }
    }

    func first() throws(LMDBError) -> Record? { try get(MDB_FIRST) }
    func next() throws(LMDBError) -> Record? { try get(MDB_NEXT) }
    func current() throws(LMDBError) -> Record? { try get(MDB_GET_CURRENT) }

    /// Positions at the first key greater than or equal to `key`.
    func seek(atLeast key: [UInt8]) throws(LMDBError) -> Record? { try get(MDB_SET_RANGE, key: key) }

    /// Like ``seek(atLeast:)`` but copies only the key: values may be
    /// 256 KiB chunks that need not be read.
    func seekKey(atLeast key: [UInt8]) throws(LMDBError) -> [UInt8]? { try getKey(MDB_SET_RANGE, key: key) }

    /// Like ``next()`` but copies only the key.
    func nextKey() throws(LMDBError) -> [UInt8]? { try getKey(MDB_NEXT) }

    /// The first key, copied; values are not read.
    func firstKey() throws(LMDBError) -> [UInt8]? { try getKey(MDB_FIRST) }

    /// The last key, copied; values are not read.
    func lastKey() throws(LMDBError) -> [UInt8]? { try getKey(MDB_LAST) }

    /// Deletes the record at the cursor.
    func deleteCurrent() throws(LMDBError) {
        try LMDBError.check(mdb_cursor_del(handle, 0))
    }
}
