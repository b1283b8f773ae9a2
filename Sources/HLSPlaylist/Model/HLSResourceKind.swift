/// What a resource of an HLS asset is.
public enum HLSResourceKind: String, Sendable, Hashable, CaseIterable {
    /// The master (multivariant) playlist.
    case masterPlaylist
    /// A media playlist (a variant's or a rendition's).
    case mediaPlaylist
    /// An I-frame (trick play) media playlist.
    case iFramePlaylist
    /// An AES-128 key.
    case key
    /// A Media Initialization Section (`EXT-X-MAP`).
    case initializationSegment
    /// A media segment.
    case segment
    /// Something else a tag points at (such as `EXT-X-SESSION-DATA`).
    case other
}
