import Foundation
import HLSPlaylist
import MediaStore

/// The `userInfo` fields an HLS resource's store entry carries, so that
/// tools (`cachetool ls`/`info`/`rm`) can group an asset's entries without
/// knowing its URL or the cache-key policy.
public enum HLSEntryMetadata {
    /// The store key of the asset's master playlist (or of its only media playlist).
    public static let asset = "hls.asset"
    /// The `HLSResourceKind` raw value.
    public static let kind = "hls.kind"
    /// The store keys of every asset keeping the entry pinned, one a line
    /// (a segment, key or playlist two masters share is kept by both; it
    /// stays pinned until the last of them is released). Missing on older
    /// entries: then ``asset`` alone keeps it.
    public static let keepers = "hls.keepers"
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
        if let assetKey {
            info[asset] = assetKey
            info[keepers] = assetKey
        }
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

    /// The assets keeping the entry whose `userInfo` this is.
    public static func keepers(of userInfo: [String: String]) -> [String] {
        if let list = userInfo[keepers] { return list.split(separator: "\n").map(String.init) }
        return userInfo[asset].map { [$0] } ?? []
    }

    /// Whether `info` is an HLS entry of the asset `assetKey` (it keeps it,
    /// or, for an entry no asset keeps, its key is the asset's).
    public static func belongs(_ info: EntryInfo, toAsset assetKey: String) -> Bool {
        let list = keepers(of: info.metadata.userInfo)
        return list.isEmpty ? info.key == assetKey : list.contains(assetKey)
    }

    /// The metadata of an entry `metadata` (already stored, pinned if
    /// `wasPinned`) once the asset `assetKey` keeps it too: a pinned entry
    /// gains a keeper and stays grouped with its first asset; an unpinned
    /// one (released, or fetched by a player) is the new asset's alone.
    public static func adding(_ assetKey: String, to metadata: EntryMetadata, wasPinned: Bool) -> EntryMetadata {
        var merged = metadata
        let previous = wasPinned ? keepers(of: metadata.userInfo) : []
        merged.userInfo[keepers] = (previous.contains(assetKey) ? previous : previous + [assetKey])
            .joined(separator: "\n")
        merged.userInfo[asset] = previous.first ?? assetKey
        return merged
    }

    /// The metadata of `info` once the asset `assetKey` no longer keeps
    /// it, when another asset still does (the entry stays pinned, grouped
    /// with the first remaining keeper); nil when no other asset keeps it
    /// (the entry is the asset's to unpin or remove).
    public static func releasing(_ info: EntryInfo, fromAsset assetKey: String) -> EntryMetadata? {
        let list = keepers(of: info.metadata.userInfo)
        let rest = list.filter { $0 != assetKey }
        guard !rest.isEmpty, rest.count < list.count else { return nil }
        var metadata = info.metadata
        metadata.userInfo[keepers] = rest.joined(separator: "\n")
        metadata.userInfo[asset] = rest[0]
        return metadata
    }
}
