/// Errors thrown by ``MediaStore``. Each names what went wrong and where.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The directory exists but holds something that is not a store
    /// (a foreign LMDB file, or other files without a store).
    case notAStore(path: String, reason: String)
    /// The store was written by a newer (or unknown) format version.
    case unsupportedFormatVersion(found: Int, supported: Int)
    /// This process already has the store open (LMDB allows one
    /// environment per file per process); use ``MediaStore/shared(directory:configuration:)``.
    /// On iOS, tvOS, watchOS and visionOS also when another process has it
    /// open (one process per store there; <doc:ApplePlatforms>).
    case alreadyOpen(path: String)
    /// The directory cannot be created, read or written.
    case inaccessible(path: String, reason: String)
    /// A stored chunk or record failed its checksum. The entry was dropped.
    case corrupted(key: String, reason: String)
    /// The store file itself is damaged (LMDB reported corruption).
    case damagedStore(reason: String)
    /// The value is larger than the whole size limit, so it cannot be cached.
    case entryTooLarge(key: String, size: Int, limit: Int)
    /// No entry (complete or partial) exists for the key.
    case notFound(key: String)
    /// Part of the requested range is not cached.
    case rangeNotCached(key: String, missing: Range<Int>)
    /// The entry was replaced or removed while a chunk-by-chunk read of it
    /// was under way; the bytes already handed out are all of the old one.
    case changedDuringRead(key: String)
    /// The entry for the key is no longer the version the call was bound
    /// to (``EntryInfo/version``, from ``MediaStore/prepareEntry(forKey:length:options:)``
    /// or ``MediaStore/info(forKey:)``): it was replaced, removed, evicted,
    /// or expired and replaced since. `found` is the current version, `nil`
    /// when there is no entry. Nothing was changed; a range fill must stop
    /// (its bytes belong to no entry any more).
    case entryReplaced(key: String, expected: UInt64, found: UInt64?)
    /// The range lies outside the entry, or is inverted.
    case invalidRange(key: String, range: Range<Int>, length: Int?)
    /// A range write does not start on a chunk boundary or does not end
    /// on one (except at the end of the entry).
    case misalignedWrite(key: String, offset: Int, count: Int, chunkSize: Int)
    /// The write contradicts the entry's known length.
    case lengthMismatch(key: String, expected: Int, actual: Int)
    /// The disk or file-size limit is full; nothing was committed.
    case diskFull
    /// The store was opened read-only.
    case readOnly
    /// The writer was already finished or cancelled.
    case writerClosed
    /// ``MediaStore/close()`` was called; open the store again to use it.
    case closed
    /// Any other LMDB or I/O failure, with its code and message.
    case storage(code: Int32, message: String)
    /// A holder name that is empty, longer than 200 UTF-8 bytes, or has a
    /// control character (``MediaStore/hold(_:by:version:)``).
    case invalidHolder(String)
    /// The store is encrypted under another key than the one given
    /// (``StoreConfiguration/encryption``). Nothing was read or changed.
    case wrongKey(path: String)
    /// The store is encrypted and no key was given (`storeIsEncrypted`
    /// true), or a key was given for a plain store (false). Nothing was
    /// read or changed.
    case encryptionMismatch(path: String, storeIsEncrypted: Bool)
    /// A rekey to another key than the one given is under way
    /// (``MediaStore/rekey(to:options:)``): finish it first. Nothing was changed.
    case rekeyUnderWay(path: String)
    /// Another process has the store open, so a rekey cannot start (it
    /// would keep reading and writing under the old key). Nothing was changed.
    case inUseElsewhere(path: String)

    public var description: String {
        switch self {
        case .notAStore(let path, let reason): "\(path) is not a media store: \(reason)"
        case .unsupportedFormatVersion(let found, let supported):
            "store format version \(found) is not supported (this build reads version \(supported))"
        case .alreadyOpen(let path):
            LMDBEnvironment.platformNeedsProcessLocalLocking
                ? "\(path) is already open (in this or another process)" : "\(path) is already open in this process"
        case .inaccessible(let path, let reason): "cannot use \(path): \(reason)"
        case .corrupted(let key, let reason):
            "corrupt data for key \(key.prefix(200)): \(reason); the entry was dropped"
        case .damagedStore(let reason): "the store file is damaged: \(reason)"
        case .entryTooLarge(let key, let size, let limit):
            "\(key.prefix(200)) is \(size) bytes, larger than the store's whole size limit of \(limit) bytes; not cached"
        case .notFound(let key): "no entry for key \(key.prefix(200))"
        case .rangeNotCached(let key, let missing):
            "bytes \(missing.lowerBound)..<\(missing.upperBound) of \(key.prefix(200)) are not cached"
        case .changedDuringRead(let key): "\(key.prefix(200)) was replaced while it was being read"
        case .entryReplaced(let key, let expected, let found):
            "\(key.prefix(200)) is no longer version \(expected) (now \(found.map { "version \($0)" } ?? "no entry")); nothing was changed"
        case .invalidRange(let key, let range, let length):
            "range \(range.lowerBound)..<\(range.upperBound) is outside \(key.prefix(200)) (length \(length.map(String.init) ?? "unknown"))"
        case .misalignedWrite(let key, let offset, let count, let chunkSize):
            "write of \(count) bytes at \(offset) to \(key.prefix(200)) is not aligned to the chunk size \(chunkSize)"
        case .lengthMismatch(let key, let expected, let actual):
            "\(key.prefix(200)) has length \(expected), but the write implies \(actual)"
        case .diskFull: "the disk is full; nothing was written"
        case .readOnly: "the store is open read-only"
        case .writerClosed: "the writer was already finished or cancelled"
        case .closed: "the store was closed"
        case .storage(let code, let message): "storage error \(code): \(message)"
        case .invalidHolder(let holder):
            "'\(holder.prefix(200))' is not a holder name (1–200 UTF-8 bytes, no control characters)"
        case .wrongKey(let path): "\(path) is encrypted under another key; nothing was read or changed"
        case .encryptionMismatch(let path, let encrypted):
            encrypted
                ? "\(path) is encrypted and no key was given; nothing was read or changed"
                : "\(path) is a plain store and a key was given; nothing was read or changed"
        case .rekeyUnderWay(let path):
            "a rekey of \(path) to another key is under way; finish it first, nothing was changed"
        case .inUseElsewhere(let path): "another process has \(path) open; nothing was changed"
        }
    }
}
