/// The largest playlist accepted: a playlist is read whole into memory,
/// parsed and (through the server) rewritten, so each of these bounds what
/// one hostile playlist costs. A playlist beyond any of them is refused
/// with ``PlaylistError/Reason/tooLarge(_:limit:)``, naming the limit.
///
/// The fetch stops reading the body at ``maxBytes`` (the rest is not
/// downloaded); ``PlaylistParser`` checks every limit itself, so a
/// playlist from anywhere (the store, a file) is bounded the same way.
public struct PlaylistLimits: Sendable, Hashable {
    /// Which limit a playlist went beyond.
    public enum Limit: String, Sendable, Hashable, CustomStringConvertible {
        /// ``PlaylistLimits/maxBytes``.
        case bytes
        /// ``PlaylistLimits/maxLineBytes``.
        case lineBytes
        /// ``PlaylistLimits/maxSegments``.
        case segments
        /// ``PlaylistLimits/maxVariants``.
        case variants
        /// ``PlaylistLimits/maxRenditions``.
        case renditions

        public var description: String {
            switch self {
            case .bytes: "bytes"
            case .lineBytes: "bytes in a line"
            case .segments: "segments"
            case .variants: "variant streams"
            case .renditions: "renditions"
            }
        }
    }

    /// Bytes of one playlist. 4 MiB by default (a VOD playlist of 20,000
    /// segments with long URIs is about 2–3 MiB).
    public var maxBytes: Int
    /// Bytes of one line (tags with long attribute lists, long URIs).
    /// 64 KiB by default.
    public var maxLineBytes: Int
    /// Segments of a media playlist. 20,000 by default: over 27 hours of
    /// 5-second segments.
    public var maxSegments: Int
    /// Variant streams of a master playlist (`EXT-X-STREAM-INF` and
    /// `EXT-X-I-FRAME-STREAM-INF`). 1,000 by default.
    public var maxVariants: Int
    /// Renditions of a master playlist (`EXT-X-MEDIA`). 1,000 by default.
    public var maxRenditions: Int

    /// Limits with the stated defaults; each at least 1.
    ///
    /// - Parameters:
    ///   - maxBytes: bytes of one playlist.
    ///   - maxLineBytes: bytes of one line.
    ///   - maxSegments: segments of a media playlist.
    ///   - maxVariants: variant streams of a master playlist.
    ///   - maxRenditions: renditions of a master playlist.
    public init(
        maxBytes: Int = 4 << 20, maxLineBytes: Int = 64 << 10, maxSegments: Int = 20_000, maxVariants: Int = 1_000,
        maxRenditions: Int = 1_000
    ) {
        self.maxBytes = max(1, maxBytes)
        self.maxLineBytes = max(1, maxLineBytes)
        self.maxSegments = max(1, maxSegments)
        self.maxVariants = max(1, maxVariants)
        self.maxRenditions = max(1, maxRenditions)
    }

    /// The value of `limit`.
    public func value(of limit: Limit) -> Int {
        switch limit {
        case .bytes: maxBytes
        case .lineBytes: maxLineBytes
        case .segments: maxSegments
        case .variants: maxVariants
        case .renditions: maxRenditions
        }
    }
}
