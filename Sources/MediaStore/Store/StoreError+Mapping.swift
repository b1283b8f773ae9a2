#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one mapping of the engine's failures (LMDB's, and chunks that do
/// not read back) to ``StoreError``.
extension StoreError {
    /// The store error for an LMDB failure.
    ///
    /// - parameter path: the store's directory when the failure came from
    ///   opening it: a file LMDB cannot use is then not a store, a busy
    ///   one is already open, an unwritable one is inaccessible.
    init(_ error: LMDBError, openingStoreAt path: String? = nil) {
        if let path {
            if error.isFormatError || error == .incompatible {
                self = .notAStore(path: path, reason: error.description)
                return
            }
            switch error.code {
            case EBUSY:
                self = .alreadyOpen(path: path)
                return
            case EACCES, EROFS:
                self = .inaccessible(path: path, reason: error.description)
                return
            default: break
            }
        }
        self =
            switch error.code {
            case ENOSPC, EFBIG, EIO, EDQUOT, LMDBError.mapFull.code: .diskFull
            case LMDBError.corrupted.code, LMDBError.panic.code, LMDBError.invalid.code:
                .damagedStore(reason: error.description)
            case EACCES, EROFS: .readOnly
            case LMDBError.closed.code: .closed
            default: .storage(code: error.code, message: error.description)
            }
    }

    /// The store error for any failure of the engine: a store error as it
    /// is, an LMDB failure mapped, a chunk that does not read back as
    /// damage. Anything else (no engine part throws it) keeps its text.
    init(_ error: any Error, openingStoreAt path: String? = nil) {
        switch error {
        case let error as StoreError: self = error
        case let error as LMDBError: self.init(error, openingStoreAt: path)
        case let fault as ChunkFault: self = .damagedStore(reason: fault.description)
        default: self = .storage(code: -1, message: String(describing: error))
        }
    }
}
