import MediaStore

/// Why the download index could not be read or written.
public enum DownloadIndexError: Error, Sendable, Equatable {
    case storage(StoreError)
    /// The stored index is not one this version reads (or not an index).
    case unreadable(String)
}
