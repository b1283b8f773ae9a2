import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming
import MediaSupport

/// Downloads HLS assets for offline playback (the role of
/// `AVAssetDownloadTask` with an `AVURLAsset` of an HLS URL): the in-memory
/// convenience over the download engine (a `MediaDownload` per call,
/// moved by an ``HLSDownloadPerformer``; for a persistent list, with
/// conditions and priorities, give the performer to a `DownloadQueue`).
/// A variant
/// chosen by a `VariantChoice`, audio and subtitle renditions by
/// `RenditionRequest`, with every playlist, segment, init segment
/// (`EXT-X-MAP`) and AES-128 key in the store, held by the asset's holder
/// (``holder(ofAsset:)``, `"hls/<asset key>"`) until ``release(_:)``.
///
/// Resources are keyed by (cache key of the URL, byte range), so the
/// segments of a single-file playlist are distinct entries and signed-URL
/// tokens follow the cache's `CacheKeyPolicy`. A resource already in the
/// store is not fetched again: a download resumed after a pause, a failure
/// or a relaunch fetches only what is missing, and one asking for another
/// media selection of an asset already kept (**augment**) fetches only
/// what that selection adds. Live playlists (no `EXT-X-ENDLIST`) are
/// refused (`DownloadError/unsupported(_:)`), and so are
/// SAMPLE-AES and FairPlay (`skd://`) keys, before anything is stored.
///
/// ```swift
/// let downloader = HLSDownloader(cache: cache)
/// let download = downloader.download(masterURL, variant: .highestBandwidth(atMost: 2_000_000),
///                                    audio: .languages(["en"]), subtitles: .all)
/// for await update in download.progressUpdates() { print(update.segments, update.seconds) }
/// // later: the French audio too, fetching only its playlist and segments
/// try await downloader.download(masterURL, audio: .languages(["en", "fr"])).completion()
/// ```
public final class HLSDownloader: Sendable {
    /// The cache downloads go into.
    public let cache: StreamingCache
    /// Resources fetched at once by one download (as many more, fetched,
    /// may wait for the store's commit at once, their bytes in memory).
    public let parallelFetches: Int
    /// Where resources are fetched and stored (shared with the loopback server).
    public let resources: HLSResourceStore
    /// Which URIs of a downloaded playlist may be fetched: those on the
    /// playlist's own origin, and those the rule allows
    /// (``PlaylistURIRule/publicHosts`` by default: no loopback, link-local,
    /// private or non-canonical address of another origin). A download
    /// naming another URI fails with `DownloadError/uriRefused(url:playlistURL:reason:)`
    /// before any of its resources is fetched.
    public let uriRule: PlaylistURIRule
    private let list = Locked<[MediaDownload]>([])

    /// - parameter resources: where resources are fetched and stored (its cache is the downloads' cache);
    ///   pass the one the loopback server uses, so that the two share their fetches.
    /// - parameter parallelFetches: resources fetched at once by one download.
    /// - parameter uriRule: which URIs of a playlist may be fetched besides those on its own origin.
    public init(resources: HLSResourceStore, parallelFetches: Int = 4, uriRule: PlaylistURIRule = .publicHosts) {
        self.cache = resources.cache
        self.parallelFetches = max(1, parallelFetches)
        self.resources = resources
        self.uriRule = uriRule
    }

    /// A downloader with a resource store of its own over `cache` (sharing
    /// no fetch with a server: see ``init(resources:parallelFetches:uriRule:)``).
    ///
    /// - parameter cache: the cache downloads go into.
    /// - parameter parallelFetches: resources fetched at once by one download.
    /// - parameter uriRule: which URIs of a playlist may be fetched besides those on its own origin.
    public convenience init(cache: StreamingCache, parallelFetches: Int = 4, uriRule: PlaylistURIRule) {
        self.init(resources: HLSResourceStore(cache: cache), parallelFetches: parallelFetches, uriRule: uriRule)
    }

    /// A downloader whose playlists may name their own origin and public hosts (``PlaylistURIRule/publicHosts``).
    ///
    /// - parameter cache: the cache downloads go into.
    /// - parameter parallelFetches: resources fetched at once by one download.
    public convenience init(cache: StreamingCache, parallelFetches: Int = 4) {
        self.init(cache: cache, parallelFetches: parallelFetches, uriRule: .publicHosts)
    }

    /// Starts downloading `url` (a master playlist, or a lone media
    /// playlist) with the variant and renditions chosen. Each call starts a
    /// download of its own; resources already in the store are kept, not
    /// fetched again. Its origin fetches are transfers of `priority` in the
    /// cache's `FetchScheduler`. `headers` (credentials, for instance) are
    /// sent to `url`'s origin only, never to another origin a playlist names.
    @discardableResult
    public func download(
        _ url: URL, variant: VariantChoice = .first, audio: RenditionRequest = .automatic,
        subtitles: RenditionRequest = .none, headers: [String: String] = [:], priority: FetchPriority = .download
    ) -> MediaDownload {
        download(
            url, variant: variant, audio: audio, subtitles: subtitles, headers: headers, priority: priority,
            hooks: DownloadRunHooks())
    }

    /// ``download(_:variant:audio:subtitles:headers:priority:)`` whose runs
    /// a test holds at `hooks`.
    package func download(
        _ url: URL, variant: VariantChoice, audio: RenditionRequest, subtitles: RenditionRequest,
        headers: [String: String], priority: FetchPriority, hooks: DownloadRunHooks
    ) -> MediaDownload {
        let performer = HLSDownloadPerformer(
            variant: variant, audio: audio, subtitles: subtitles, parallelFetches: parallelFetches,
            resources: resources, uriRule: uriRule)
        let assetKey = resources.resourceKey(for: url).storeKey
        let record = DownloadRecord(
            url: url, cacheKey: assetKey, headers: headers, kind: performer.kind, priority: priority, queueOrder: 0)
        // Started at once and at each resume (an asset's downloads run side
        // by side), also once the downloader is gone.
        let itself = WeakDownload()
        let download = MediaDownload(
            record: record, key: assetKey, holder: Self.holder(ofAsset: assetKey), performer: performer, cache: cache,
            hooks: hooks, onChange: { itself.download?.start() })
        itself.download = download
        list.withLock { list in
            list.removeAll { $0.state == .cancelled || $0.state == .completed }
            list.append(download)
        }
        download.start()
        return download
    }

    /// A download, for its own scheduling callback (which it owns).
    private final class WeakDownload: @unchecked Sendable {
        weak var download: MediaDownload?
    }

    /// The downloads started and not yet finished or cancelled.
    public var downloads: [MediaDownload] {
        list.current.filter { $0.state != .cancelled && $0.state != .completed }
    }

    /// Whether `data` is a master playlist, or a media playlist the planner
    /// accepts, within `limits`.
    public static func isDownloadable(_ data: Data, url: URL, limits: PlaylistLimits = PlaylistLimits()) -> Bool {
        switch try? PlaylistParser.parse(data, url: url, limits: limits) {
        case .master: true
        case .media(let media): (try? HLSDownloadPlanner.plan(media: media)) != nil
        case nil: false
        }
    }

    /// The entries of the asset `url` in the store (its master playlist,
    /// and every resource a download of it kept).
    public func entries(of url: URL) throws(StoreError) -> [EntryInfo] {
        try Self.entries(ofAsset: resources.resourceKey(for: url).storeKey, in: cache.store)
    }

    /// The entries of the asset whose master playlist is stored under
    /// `assetKey`, read from `store` (the cache's, as a `StoreIO` call gets it).
    static func entries(ofAsset assetKey: String, in store: MediaStore) throws(StoreError) -> [EntryInfo] {
        try store.entries().filter { HLSEntryMetadata.belongs($0, toAsset: assetKey) }
    }

    /// The store holder of the asset whose master playlist is stored
    /// under `assetKey`: `"hls/<asset key>"` (a key too long for a holder
    /// name is hashed).
    public static func holder(ofAsset assetKey: String) -> String { HolderName.make("hls", assetKey) }

    /// The asset key `holder` names, when it is an asset's holder whose key was not hashed.
    static func asset(ofHolder holder: String) -> String? {
        guard holder.hasPrefix("hls/"), !holder.hasPrefix("hls/#") else { return nil }
        return String(holder.dropFirst("hls/".count))
    }

    /// Cancels the asset's downloads and releases the asset's holds (its
    /// entries become evictable again, unless someone else holds them: the
    /// app, another asset sharing a resource, a `DownloadQueue`
    /// download). Returns how many entries the asset held.
    ///
    /// An entry another asset's holder still holds is grouped with that
    /// asset from then on (its ``HLSEntryMetadata/asset``), when the
    /// holder names it (``holder(ofAsset:)`` of a key short enough not to
    /// be hashed).
    ///
    /// An entry written by a version before store holds was pinned as the
    /// app's: those of the asset that no other asset kept (per their
    /// `hls.keepers`) are released from the app's hold too; one other
    /// assets kept is taken off this asset (its `hls.keepers` names the
    /// others), so the release of the last of them lets it go.
    ///
    /// The store work runs on the store's write queue (`StoreIO`), off
    /// Swift's concurrency pool.
    @discardableResult
    public func release(_ url: URL) async throws(StoreError) -> Int {
        let assetKey = resources.resourceKey(for: url).storeKey
        let running = list.withLock { list -> [MediaDownload] in
            // By the key's bytes, as the store keeps assets apart.
            let matching = list.filter { ExactKey.equal($0.key, assetKey) }
            list.removeAll { ExactKey.equal($0.key, assetKey) }
            return matching
        }
        for download in running { download.cancel() }
        return try await cache.storeIO.write { store throws(StoreError) in
            try Self.release(asset: assetKey, in: store)
        }
    }

    /// ``release(_:)``'s store work (blocking: on the store's write queue).
    private static func release(asset assetKey: String, in store: MediaStore) throws(StoreError) -> Int {
        var count = try store.releaseAll(by: holder(ofAsset: assetKey))
        for entry in try entries(ofAsset: assetKey, in: store) {
            let other = try store.holders(of: entry.key).lazy.compactMap(asset(ofHolder:)).first {
                !ExactKey.equal($0, assetKey)
            }
            if let other, ExactKey.equal(entry.metadata.userInfo[HLSEntryMetadata.asset] ?? "", assetKey) {
                var metadata = entry.metadata
                metadata.userInfo[HLSEntryMetadata.asset] = other
                try store.setMetadata(metadata, forKey: entry.key, version: entry.version)
            }
            let legacy = HLSEntryMetadata.legacyKeepers(of: entry.metadata.userInfo)
            guard legacy.contains(where: { ExactKey.equal($0, assetKey) }) else { continue }
            let others = legacy.filter { !ExactKey.equal($0, assetKey) }
            guard others.isEmpty else {
                // Still kept by the others: no longer this asset's, so the last of them lets it go.
                var metadata = entry.metadata
                metadata.userInfo[HLSEntryMetadata.keepers] = others.joined(separator: "\n")
                try store.setMetadata(metadata, forKey: entry.key, version: entry.version)
                continue
            }
            if try store.release(entry.key, by: MediaStore.appHolder, version: entry.version) { count += 1 }
        }
        return count
    }

    /// Cancels the asset's downloads, releases its holds (``release(_:)``)
    /// and removes every entry of it nobody else holds. Returns how many
    /// were removed.
    @discardableResult
    public func remove(_ url: URL) async throws(StoreError) -> Int {
        _ = try await release(url)
        let assetKey = resources.resourceKey(for: url).storeKey
        return try await cache.storeIO.write { store throws(StoreError) in
            var count = 0
            for entry in Self.masterFirst(try Self.entries(ofAsset: assetKey, in: store), assetKey: assetKey)
            where try store.holders(of: entry.key).isEmpty {
                if try store.remove(forKey: entry.key, version: entry.version) { count += 1 }
            }
            return count
        }
    }

    /// `entries` with the asset's master first: a pinned master is served
    /// as its downloaded selection (`MediaServer` filters it by the media
    /// playlists pinned), so it goes before them, never while they go.
    private static func masterFirst(_ entries: [EntryInfo], assetKey: String) -> [EntryInfo] {
        entries.filter { ExactKey.equal($0.key, assetKey) } + entries.filter { !ExactKey.equal($0.key, assetKey) }
    }
}

extension MediaDownload {
    /// The plan of an HLS download (every resource of the selection), once its playlists are read.
    public var plan: HLSDownloadPlan? { detail as? HLSDownloadPlan }

    /// The store key of an HLS download's master playlist: what the asset's entries are grouped under.
    public var assetKey: String { key }
}
