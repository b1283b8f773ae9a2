import Foundation

/// One resource an offline download of an HLS asset fetches.
public struct HLSResource: Sendable, Hashable {
    public let kind: HLSResourceKind
    /// The absolute URL to fetch.
    public let url: URL
    /// The sub-range of `url` to fetch; nil for the whole resource.
    public let byteRange: ByteRange?
    /// What it is cached under.
    public let cacheKey: HLSResourceKey
    /// The media playlist it belongs to (for a media playlist, its own URL);
    /// nil for the master playlist and session keys.
    public let playlistURL: URL?
    /// The type of the rendition it belongs to; nil for the variant's own
    /// stream, the master playlist and session keys.
    public let mediaType: Rendition.MediaType?
    /// Seconds of media (segments only; 0 for the rest).
    public let duration: Double
    /// Where the segment starts in its playlist, in seconds (segments only).
    public let startTime: Double?

    public init(
        kind: HLSResourceKind, url: URL, byteRange: ByteRange? = nil, cacheKey: HLSResourceKey, playlistURL: URL?,
        mediaType: Rendition.MediaType? = nil, duration: Double = 0, startTime: Double? = nil
    ) {
        self.kind = kind
        self.url = url
        self.byteRange = byteRange
        self.cacheKey = cacheKey
        self.playlistURL = playlistURL
        self.mediaType = mediaType
        self.duration = duration
        self.startTime = startTime
    }
}
