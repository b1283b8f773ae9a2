import Foundation

/// One URI in a playlist, as the rewriter hands it to its mapping: what it
/// points at, resolved, and where it is.
public struct PlaylistReference: Sendable, Hashable {
    /// The absolute URL the URI resolves to.
    public let url: URL
    /// The byte range that goes with it (a segment's `EXT-X-BYTERANGE`,
    /// with its offset resolved, or an `EXT-X-MAP`'s `BYTERANGE`).
    public let byteRange: ByteRange?
    /// What it points at: a segment line is a `.segment`, a variant line or
    /// an `EXT-X-MEDIA` URI a `.mediaPlaylist`, an `EXT-X-KEY` or
    /// `EXT-X-SESSION-KEY` a `.key`, an `EXT-X-MAP` an
    /// `.initializationSegment`, an `EXT-X-I-FRAME-STREAM-INF` an
    /// `.iFramePlaylist`; the URI attribute of any other tag is `.other`.
    public let kind: HLSResourceKind
    /// The tag whose `URI` attribute it is (without `#`); nil for a URI line.
    public let tag: String?
    /// The 1-based line it is on.
    public let line: Int

    public init(url: URL, byteRange: ByteRange? = nil, kind: HLSResourceKind, tag: String? = nil, line: Int) {
        self.url = url
        self.byteRange = byteRange
        self.kind = kind
        self.tag = tag
        self.line = line
    }
}
