import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

/// The `userInfo` fields an HLS resource's store entry carries, so that
/// tools (`cachetool ls`/`info`/`rm`) can group an asset's entries without
/// knowing its URL or the cache-key policy. Who keeps an entry is not
/// here: the store's holders say it (`MediaStore.holders(of:)`); an
/// entry two assets keep is grouped with the first that kept it.
public enum HLSEntryMetadata {
    /// The store key of the asset's master playlist (or of its only media playlist).
    public static let asset = "hls.asset"
    /// The `HLSResourceKind` raw value.
    public static let kind = "hls.kind"
    /// Written by versions before store holds: the store keys of every
    /// asset keeping the entry pinned, one a line. Read only (to adopt such
    /// pins); who keeps an entry now is the store's holders.
    public static let keepers = LegacyKeepers.field
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

    /// The asset the entry whose `userInfo` this is is grouped with, as
    /// a list: its ``asset``, or on an entry a version before holds wrote,
    /// its ``keepers``; empty for an entry of no asset.
    public static func keepers(of userInfo: [String: String]) -> [String] {
        let legacy = legacyKeepers(of: userInfo)
        if !legacy.isEmpty { return legacy }
        return userInfo[asset].map { [$0] } ?? []
    }

    /// The ``keepers`` list a version before holds wrote; empty on a newer entry.
    static func legacyKeepers(of userInfo: [String: String]) -> [String] {
        LegacyKeepers.of(userInfo)
    }

    /// Whether `info` is an HLS entry of the asset `assetKey`: grouped with
    /// it (``keepers(of:)``), or, for an entry of no asset, the asset's key.
    public static func belongs(_ info: EntryInfo, toAsset assetKey: String) -> Bool {
        let list = keepers(of: info.metadata.userInfo)
        return list.isEmpty ? info.key == assetKey : list.contains(assetKey)
    }

    /// The metadata of an entry `metadata` (already stored, held if
    /// `isHeld`) once the asset `assetKey` keeps it too: a held entry stays
    /// grouped with its asset; one nobody holds (released, or fetched by a
    /// player) is the new asset's.
    static func adding(_ assetKey: String, to metadata: EntryMetadata, isHeld: Bool) -> EntryMetadata {
        var merged = metadata
        let previous = isHeld ? merged.userInfo[asset] : nil
        merged.userInfo[asset] = previous ?? assetKey
        merged.userInfo[keepers] = nil
        return merged
    }
}
