import MediaStreaming

/// A snapshot of a ``MediaDownload`` of any kind: bytes, and for an HLS
/// asset the counts of its plan (zero for a progressive file).
public struct DownloadProgress: Sendable, Equatable {
    /// Where the download stands.
    public var state: MediaDownload.State
    /// Bytes in the store: of the file, or of the asset's resources
    /// (playlists, keys, init segments and segments, counting those that
    /// were already there).
    public var bytes: Int = 0
    /// The file's length (0 until known; 0 for an HLS asset, whose length
    /// is known only once every resource is fetched).
    public var total: Int = 0
    /// Resources in the store, of ``totalResources`` (HLS).
    public var resources: Int = 0
    /// Every resource of the plan (0 until the playlists are read; HLS).
    public var totalResources: Int = 0
    /// Media segments in the store, of ``totalSegments`` (HLS).
    public var segments: Int = 0
    /// Media segments of the plan, over every track (HLS).
    public var totalSegments: Int = 0
    /// Seconds of media in the store: the durations of the stored segments
    /// of the variant's own track (the one that plays video; HLS, like
    /// `AVAssetDownloadTask`'s `loadedTimeRanges`).
    public var seconds: Double = 0
    /// The duration of the variant's track (HLS).
    public var totalSeconds: Double = 0
    /// Resources this run fetched from the origin, not those it found in
    /// the store (HLS). A run begins when the download starts and again at
    /// each resume; once it has read the playlists, this and the counts
    /// above start again from 0, so after a resume it counts only what the
    /// earlier runs had not stored, and it is never more than ``resources``.
    public var fetchedResources: Int = 0

    public init(state: MediaDownload.State, bytes: Int = 0, total: Int = 0) {
        self.state = state
        self.bytes = bytes
        self.total = total
    }

    /// Done of the whole: `resources / totalResources` once a plan is
    /// known, else `bytes / total`; 0 while neither is known.
    public var fraction: Double {
        if totalResources > 0 { return Double(resources) / Double(totalResources) }
        return total > 0 ? Double(bytes) / Double(total) : 0
    }
}
