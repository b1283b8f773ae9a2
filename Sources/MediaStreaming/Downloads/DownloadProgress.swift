/// A snapshot of an ``OfflineDownload``.
public struct DownloadProgress: Sendable, Equatable {
    /// Bytes of the resource in the store.
    public var bytes: Int
    /// Its length (0 until known).
    public var total: Int
    /// Where the download stands.
    public var state: OfflineDownload.State

    /// `bytes / total`, 0 while the length is unknown.
    public var fraction: Double { total > 0 ? Double(bytes) / Double(total) : 0 }
}
