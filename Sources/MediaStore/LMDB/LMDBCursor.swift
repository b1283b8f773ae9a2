import CLMDB

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

    private func get(_ op: MDB_cursor_op, key: [UInt8]? = nil) throws(LMDBError) -> Record? {
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
        let keyBytes = [UInt8](UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))
        let valueBytes = [UInt8](UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        return Record(key: keyBytes, value: valueBytes)
    }

    func first() throws(LMDBError) -> Record? { try get(MDB_FIRST) }
    func next() throws(LMDBError) -> Record? { try get(MDB_NEXT) }
    func current() throws(LMDBError) -> Record? { try get(MDB_GET_CURRENT) }

    /// Positions at the first key greater than or equal to `key`.
    func seek(atLeast key: [UInt8]) throws(LMDBError) -> Record? { try get(MDB_SET_RANGE, key: key) }

    /// Deletes the record at the cursor.
    func deleteCurrent() throws(LMDBError) {
        try LMDBError.check(mdb_cursor_del(handle, 0))
    }
}
