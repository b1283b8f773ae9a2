import MediaStore

/// Errors thrown by the storages.
///
/// The first seven cases are hyperoslo/Cache's. A missing key is always
/// ``notFound``, from every layer.
public enum StorageError: Error, Equatable, Sendable {
    /// No object for the key (or, for `object(forKey:)`, only an expired one).
    case notFound
    /// The memory tier holds a value of another type for the key.
    case typeNotMatch
    /// Kept for source compatibility; not thrown (the store keeps no file attributes).
    case malformedFileAttributes
    /// The stored bytes could not be decoded.
    case decodingFailed
    /// The value could not be encoded.
    case encodingFailed
    /// The storage was deallocated before an asynchronous operation ran.
    case deallocated
    /// A transformer failed.
    case transformerFail
    /// The stored bytes failed their checksum; the entry was dropped.
    case corrupted(key: String, reason: String)
    /// The value is larger than the whole disk size limit, so it was not stored.
    case entryTooLarge(size: Int, limit: Int)
    /// Any other failure of the underlying store.
    case store(StoreError)
}

extension StorageError {
    /// Maps an engine error to the facade's vocabulary.
    @usableFromInline
    init(_ error: StoreError) {
        switch error {
        case .notFound: self = .notFound
        case .corrupted(let key, let reason): self = .corrupted(key: key, reason: reason)
        case .entryTooLarge(_, let size, let limit): self = .entryTooLarge(size: size, limit: limit)
        default: self = .store(error)
        }
    }
}
