import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

/// An HLS asset as kept in a store: its entries (grouped by the
/// ``HLSEntryMetadata`` fields a download writes) and, per media playlist,
/// how many of its segments are stored. What `cachetool ls --hls`, `info`
/// and `rm` show and remove; it needs neither the asset's URL nor the
/// cache-key policy.
public struct HLSAssetSummary: Sendable {
    /// One media playlist of the asset.
    public struct Track: Sendable, Equatable {
        /// Its store key.
        public let key: String
        /// The URL it was read from.
        public let url: URL?
        /// `variant`, `AUDIO` or `SUBTITLES`.
        public let role: String
        /// Segments of it in the store (complete entries).
        public let storedSegments: Int
        /// Its segments; nil when the stored playlist cannot be read.
        public let totalSegments: Int?
        /// Seconds of media it lasts.
        public let duration: Double

        /// Whether every segment is stored.
        public var isComplete: Bool { totalSegments.map { storedSegments >= $0 } ?? false }
    }

    /// The store key of the master playlist (or lone media playlist).
    public let key: String
    /// The URL of the master playlist, when its entry is kept.
    public let url: URL?
    /// Every entry of the asset, the master first.
    public let entries: [EntryInfo]
    /// Its media playlists, in key order.
    public let tracks: [Track]

    /// Bytes of its entries.
    public var bytes: Int { entries.reduce(0) { $0 + $1.cachedBytes } }
    /// Whether every entry is pinned.
    public var isPinned: Bool { entries.allSatisfy(\.isPinned) }
    /// Whether every track has all its segments.
    public var isComplete: Bool { !tracks.isEmpty && tracks.allSatisfy(\.isComplete) }

    /// Every asset in `store`.
    public static func assets(in store: MediaStore) throws(StoreError) -> [HLSAssetSummary] {
        let entries = try store.entries()
        let keys = Set(entries.flatMap { HLSEntryMetadata.keepers(of: $0.metadata.userInfo) })
        var result: [HLSAssetSummary] = []
        for key in keys.sorted() {
            if let asset = try summary(key, entries: entries, store: store) { result.append(asset) }
        }
        return result
    }

    /// The asset whose master playlist is stored under `key`; nil when no
    /// entry names it as its asset.
    public static func asset(_ key: String, in store: MediaStore) throws(StoreError) -> HLSAssetSummary? {
        try summary(key, entries: try store.entries(), store: store)
    }

    private static func summary(_ key: String, entries: [EntryInfo], store: MediaStore) throws(StoreError)
        -> HLSAssetSummary?
    {
        let mine = entries.filter { HLSEntryMetadata.belongs($0, toAsset: key) }
        guard mine.contains(where: { $0.key != key }) else { return nil }
        let master = mine.first { $0.key == key }
        let ordered = (master.map { [$0] } ?? []) + mine.filter { $0.key != key }.sorted { $0.key < $1.key }
        var segmentsByPlaylist: [String: Int] = [:]
        for entry in mine where entry.isComplete && entry.metadata.userInfo[HLSEntryMetadata.kind] == "segment" {
            if let playlist = entry.metadata.userInfo[HLSEntryMetadata.playlist] {
                segmentsByPlaylist[playlist, default: 0] += 1
            }
        }
        var tracks: [Track] = []
        for entry in ordered where entry.metadata.userInfo[HLSEntryMetadata.kind] == "mediaPlaylist" {
            let url = entry.metadata.userInfo[HLSEntryMetadata.url].flatMap(URL.init(string:))
            var media: MediaPlaylist?
            if let url, let data = try store.data(forKey: entry.key) {
                media = (try? PlaylistParser.parse(data, url: url))?.media
            }
            tracks.append(
                Track(
                    key: entry.key, url: url, role: entry.metadata.userInfo[HLSEntryMetadata.track] ?? "variant",
                    storedSegments: segmentsByPlaylist[entry.key] ?? 0,
                    totalSegments: media.map {
                        Set($0.segments.map { "\($0.url) \($0.byteRange?.description ?? "")" }).count
                    },
                    duration: media?.duration ?? 0))
        }
        let url = master?.metadata.userInfo[HLSEntryMetadata.url].flatMap(URL.init(string:))
        return HLSAssetSummary(key: key, url: url, entries: ordered, tracks: tracks)
    }
}
