import Foundation

/// One media segment of a media playlist: a URI line and the tags that
/// apply to it.
public struct MediaSegment: Sendable, Hashable {
    /// The resolved URI.
    public let url: URL
    /// The `EXTINF` duration in seconds.
    public let duration: Double
    /// The `EXTINF` title (the text after the comma); empty when none.
    public let title: String
    /// The sub-range of `url` (`EXT-X-BYTERANGE`), its offset resolved also
    /// where the playlist leaves it out; nil for the whole resource.
    public let byteRange: ByteRange?
    /// The media sequence number (`EXT-X-MEDIA-SEQUENCE` plus the index).
    public let sequenceNumber: Int
    /// The discontinuity sequence number.
    public let discontinuitySequence: Int
    /// Whether `EXT-X-DISCONTINUITY` precedes the segment.
    public let isDiscontinuity: Bool
    /// The keys in force (at most one per `KEYFORMAT`); empty when the
    /// segment is not encrypted.
    public let keys: [PlaylistKey]
    /// The `EXT-X-MAP` in force, if any.
    public let map: InitializationMap?
    /// Seconds from the start of the playlist (the sum of the durations before it).
    public let startTime: Double

    public init(
        url: URL, duration: Double, title: String = "", byteRange: ByteRange? = nil, sequenceNumber: Int,
        discontinuitySequence: Int = 0, isDiscontinuity: Bool = false, keys: [PlaylistKey] = [],
        map: InitializationMap? = nil, startTime: Double
    ) {
        self.url = url
        self.duration = duration
        self.title = title
        self.byteRange = byteRange
        self.sequenceNumber = sequenceNumber
        self.discontinuitySequence = discontinuitySequence
        self.isDiscontinuity = isDiscontinuity
        self.keys = keys
        self.map = map
        self.startTime = startTime
    }
}
