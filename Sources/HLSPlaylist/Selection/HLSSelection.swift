import Foundation

/// A variant and the renditions chosen to go with it: what an offline
/// download of an HLS asset keeps.
public struct HLSSelection: Sendable, Hashable {
    public let variant: VariantStream
    /// Chosen renditions of the variant's AUDIO group.
    public let audio: [Rendition]
    /// Chosen renditions of the variant's SUBTITLES group.
    public let subtitles: [Rendition]

    public init(variant: VariantStream, audio: [Rendition] = [], subtitles: [Rendition] = []) {
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
    }

    /// The media playlists to fetch: the variant's, then each chosen
    /// rendition's that has a URI (one carried in the variant's own stream
    /// has none), without repeats.
    public var mediaPlaylistURLs: [URL] {
        var seen: Set<String> = []
        return ([variant.url] + (audio + subtitles).compactMap(\.url)).filter {
            seen.insert($0.absoluteString).inserted
        }
    }
}
