import Foundation

/// The Media Initialization Section (`EXT-X-MAP`) the following segments
/// need before they can be decoded, such as an fMP4 `init.mp4`.
public struct InitializationMap: Sendable, Hashable {
    /// The resolved `URI`.
    public let url: URL
    /// The `BYTERANGE` inside `url`, when the section is part of a larger
    /// resource (single-file fMP4 puts it before the first segment).
    public let byteRange: ByteRange?

    public init(url: URL, byteRange: ByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}
