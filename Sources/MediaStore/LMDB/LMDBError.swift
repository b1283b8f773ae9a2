internal import CLMDB

/// An error reported by LMDB, carrying its result code and message.
struct LMDBError: Error, Equatable, CustomStringConvertible {
    /// The raw LMDB or errno result code.
    let code: Int32

    init(code: Int32) {
        self.code = code
    }

    var description: String {
        self == .closed ? "the environment is closed" : "LMDB error \(code): \(String(cString: mdb_strerror(code)))"
    }

    /// Not LMDB's: a transaction was begun after ``LMDBEnvironment/close()``
    /// (outside LMDB's range of codes, -30799 to -30780, and errno's).
    static let closed = LMDBError(code: -30_000)

    static let notFound = LMDBError(code: MDB_NOTFOUND)
    static let keyExists = LMDBError(code: MDB_KEYEXIST)
    static let mapFull = LMDBError(code: MDB_MAP_FULL)
    static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    static let invalid = LMDBError(code: MDB_INVALID)
    static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    static let corrupted = LMDBError(code: MDB_CORRUPTED)
    static let panic = LMDBError(code: MDB_PANIC)
    static let readersFull = LMDBError(code: MDB_READERS_FULL)
    static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    /// A database opened with flags it was not created with (or a name
    /// that is a key of another kind in the main database).
    static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)

    /// Throws unless `code` is `MDB_SUCCESS`.
    static func check(_ code: Int32) throws(LMDBError) {
        if code != MDB_SUCCESS { throw LMDBError(code: code) }
    }

    /// Whether the error means the file is not a usable LMDB environment.
    var isFormatError: Bool {
        self == .invalid || self == .versionMismatch || self == .corrupted || self == .panic
    }
}
