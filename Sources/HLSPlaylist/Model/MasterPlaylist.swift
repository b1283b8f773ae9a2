import Foundation

/// A master (multivariant) playlist: the variants of an asset, the
/// renditions they play with, and the session keys.
public struct MasterPlaylist: Sendable, Hashable {
    /// The URL the playlist was read from; its URIs are resolved against it.
    public let url: URL
    /// `EXT-X-VERSION`, if present.
    public let version: Int?
    /// The `EXT-X-STREAM-INF` variants, in playlist order (the first is
    /// the one a client starts with).
    public let variants: [VariantStream]
    /// The `EXT-X-MEDIA` renditions, in playlist order.
    public let renditions: [Rendition]
    /// The `EXT-X-SESSION-KEY` keys.
    public let sessionKeys: [PlaylistKey]
    /// The media playlists of the `EXT-X-I-FRAME-STREAM-INF` tags
    /// (trick play). Recognised only: selection and planning skip them.
    public let iFramePlaylistURLs: [URL]
    /// `EXT-X-INDEPENDENT-SEGMENTS`.
    public let hasIndependentSegments: Bool

    public init(
        url: URL, version: Int? = nil, variants: [VariantStream], renditions: [Rendition] = [],
        sessionKeys: [PlaylistKey] = [], iFramePlaylistURLs: [URL] = [], hasIndependentSegments: Bool = false
    ) {
        self.url = url
        self.version = version
        self.variants = variants
        self.renditions = renditions
        self.sessionKeys = sessionKeys
        self.iFramePlaylistURLs = iFramePlaylistURLs
        self.hasIndependentSegments = hasIndependentSegments
    }

    /// The renditions of `type` in group `groupID`, in playlist order.
    public func renditions(ofType type: Rendition.MediaType, inGroup groupID: String) -> [Rendition] {
        renditions.filter { $0.type == type && $0.groupID == groupID }
    }
}
