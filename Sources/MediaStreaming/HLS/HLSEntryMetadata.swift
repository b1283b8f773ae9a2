import Foundation
import MediaStore

/// The `userInfo` fields an HLS resource's store entry carries, so that
/// tools (`cachetool ls`/`info`/`rm`) can group an asset's entries without
/// knowing its URL or the cache-key policy.
public enum HLSEntryMetadata {
    /// The store key of the asset's master playlist (or of its only media playlist).
    public static let asset = "hls.asset"
    /// The ``HLSResourceKind`` raw value.
    public static let kind = "hls.kind"
    /// For segments, keys and init segments: the store key of their media playlist.
    public static let playlist = "hls.playlist"
    /// For playlists: the URL they were read from (their URIs resolve against it).
    public static let url = "hls.url"
    /// For media playlists: `variant`, `AUDIO` or `SUBTITLES`, and the
    /// rendition's language, if any (`AUDIO fr`).
    public static let track = "hls.track"

    /// The metadata of `resource` of the asset whose master is `assetKey`.
    /// `playlistKey` is the store key of the media playlist it belongs to.
    public static func metadata(for resource: HLSResource, assetKey: String?, playlistKey: String?, mimeType: String)
        -> EntryMetadata
    {
        var info: [String: String] = [kind: resource.kind.rawValue]
        if let assetKey { info[asset] = assetKey }
        switch resource.kind {
        case .masterPlaylist, .mediaPlaylist, .iFramePlaylist:
            info[url] = resource.url.absoluteString
        default:
            break
        }
        if resource.kind != .mediaPlaylist, resource.kind != .masterPlaylist, let playlistKey {
            info[playlist] = playlistKey
        }
        if resource.kind == .mediaPlaylist {
            info[track] = resource.mediaType?.rawValue ?? "variant"
        }
        return EntryMetadata(mimeType: mimeType, userInfo: info)
    }

    /// Whether `info` is an HLS entry of the asset `assetKey`.
    public static func belongs(_ info: EntryInfo, toAsset assetKey: String) -> Bool {
        info.metadata.userInfo[asset] == assetKey || info.key == assetKey
    }
}
