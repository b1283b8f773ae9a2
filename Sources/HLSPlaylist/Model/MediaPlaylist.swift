import Foundation

/// A media playlist: the segments of one rendition or variant.
public struct MediaPlaylist: Sendable, Hashable {
    /// `EXT-X-PLAYLIST-TYPE`.
    public enum PlaylistType: String, Sendable, Hashable {
        /// Segments are only added at the end.
        case event = "EVENT"
        /// The playlist cannot change.
        case vod = "VOD"
    }

    /// The URL the playlist was read from; its URIs are resolved against it.
    public let url: URL
    /// `EXT-X-VERSION`, if present.
    public let version: Int?
    /// `EXT-X-TARGETDURATION` in seconds.
    public let targetDuration: Int
    /// `EXT-X-MEDIA-SEQUENCE` (0 when absent).
    public let mediaSequence: Int
    /// `EXT-X-DISCONTINUITY-SEQUENCE` (0 when absent).
    public let discontinuitySequence: Int
    /// `EXT-X-PLAYLIST-TYPE`, if present.
    public let playlistType: PlaylistType?
    /// Whether `EXT-X-ENDLIST` is present: no segment will be added.
    public let hasEndList: Bool
    /// `EXT-X-I-FRAMES-ONLY`.
    public let isIFramesOnly: Bool
    /// `EXT-X-INDEPENDENT-SEGMENTS`.
    public let hasIndependentSegments: Bool
    public let segments: [MediaSegment]

    public init(
        url: URL, version: Int? = nil, targetDuration: Int, mediaSequence: Int = 0, discontinuitySequence: Int = 0,
        playlistType: PlaylistType? = nil, hasEndList: Bool, isIFramesOnly: Bool = false,
        hasIndependentSegments: Bool = false, segments: [MediaSegment]
    ) {
        self.url = url
        self.version = version
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.playlistType = playlistType
        self.hasEndList = hasEndList
        self.isIFramesOnly = isIFramesOnly
        self.hasIndependentSegments = hasIndependentSegments
        self.segments = segments
    }

    /// Whether the playlist may still grow (no `EXT-X-ENDLIST`): a live or
    /// still-running event stream, which must not be kept as finished.
    public var isLive: Bool { !hasEndList }

    /// The sum of the segment durations, in seconds.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }
}
