/// A snapshot of an ``HLSDownload``: bytes, segments and seconds of media
/// in the store (the last like `AVAssetDownloadTask`'s `loadedTimeRanges`).
public struct HLSDownloadProgress: Sendable, Equatable {
    /// Where the download stands.
    public var state: HLSDownload.State
    /// Bytes of the asset's resources in the store (playlists, keys, init
    /// segments and segments, counting those that were already there).
    public var bytes: Int = 0
    /// Resources in the store, of ``totalResources``.
    public var resources: Int = 0
    /// Every resource of the plan (0 until the playlists are read).
    public var totalResources: Int = 0
    /// Media segments in the store, of ``totalSegments``.
    public var segments: Int = 0
    /// Media segments of the plan, over every track (0 until the playlists are read).
    public var totalSegments: Int = 0
    /// Seconds of media in the store: the durations of the stored segments
    /// of the variant's own track (the one that plays video).
    public var seconds: Double = 0
    /// The duration of the variant's track.
    public var totalSeconds: Double = 0
    /// Resources this run fetched from the origin, not those it found in
    /// the store. A run begins when the download starts and again at each
    /// ``HLSDownload/resume()``; once it has read the playlists, this and
    /// the counts above start again from 0, so after a resume it counts
    /// only what the earlier runs had not stored, and it is never more
    /// than ``resources``.
    public var fetchedResources: Int = 0

    public init(state: HLSDownload.State) {
        self.state = state
    }

    /// `resources / totalResources`; 0 while the plan is not known.
    public var fraction: Double { totalResources > 0 ? Double(resources) / Double(totalResources) : 0 }
}
