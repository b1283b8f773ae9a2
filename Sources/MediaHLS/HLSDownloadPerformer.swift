import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

/// Moves the bytes of an HLS download: reads the master (or lone media)
/// playlist and the selected media playlists, makes the plan, and keeps
/// every resource of it in the store, held by the run's holder while the
/// run counts. Used by an ``HLSDownloader``'s downloads and by a
/// `DownloadQueue` (records of its `kind`, `hls` by default), so HLS
/// assets are queued, kept across relaunches and resumed like progressive
/// files. A resumed run fetches only the resources the store lacks.
///
/// ```swift
/// let queue = try await DownloadQueue.open(cache: cache, performers: [HLSDownloadPerformer()])
/// try await queue.enqueue(masterURL, kind: HLSDownloadPerformer.kind)
/// ```
public struct HLSDownloadPerformer: DownloadPerformer, CompletionKeyedPerformer {
    /// The default kind of records it performs.
    public static let kind = "hls"

    /// The record kind it performs.
    public let kind: String
    /// The variant each of its records downloads.
    public let variant: VariantChoice
    /// The audio renditions each of its records downloads.
    public let audio: RenditionRequest
    /// The subtitle renditions each of its records downloads.
    public let subtitles: RenditionRequest
    /// Resources fetched at once by one download (as many more, fetched,
    /// may wait for the store's commit at once, their bytes in memory).
    public let parallelFetches: Int
    /// Where its downloads fetch and store resources (over the download's
    /// cache); `nil`: a store of their own for each run.
    public let resources: HLSResourceStore?
    /// Which URIs of a downloaded playlist may be fetched besides those on
    /// the playlist's own origin (``PlaylistURIRule/publicHosts`` by default).
    public let uriRule: PlaylistURIRule

    /// A performer for records of `kind`, each downloaded with this selection.
    ///
    /// - Parameters:
    ///   - kind: the record kind (one performer per selection: give each its own kind).
    ///   - variant: the variant to download.
    ///   - audio: the audio renditions to download.
    ///   - subtitles: the subtitle renditions to download.
    ///   - parallelFetches: resources fetched at once by one download.
    ///   - resources: the app's resource store over the queue's cache (shared with
    ///     its `MediaServer`, so that a download and playback fetch a resource once).
    ///   - uriRule: which URIs of a playlist may be fetched besides those on its own origin.
    public init(
        kind: String = Self.kind, variant: VariantChoice = .first, audio: RenditionRequest = .automatic,
        subtitles: RenditionRequest = .none, parallelFetches: Int = 4, resources: HLSResourceStore? = nil,
        uriRule: PlaylistURIRule = .publicHosts
    ) {
        self.kind = kind
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.parallelFetches = max(1, parallelFetches)
        self.resources = resources
        self.uriRule = uriRule
    }

    public func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
        -> [StoredEntry]
    {
        let run = HLSRun(
            record: record, performer: self, resources: resources ?? HLSResourceStore(cache: context.cache),
            context: context)
        let plan = try await run.perform()
        // What the plan kept, the master last; never every entry grouped
        // with the asset (a selection released earlier stays evictable).
        var seen: Set<String> = []
        let keys = plan.resources.map(\.cacheKey.storeKey).filter { seen.insert($0).inserted }
        let assetKey = run.assetKey
        let ordered = keys.filter { !ExactKey.equal($0, assetKey) } + keys.filter { ExactKey.equal($0, assetKey) }
        do {
            return try await context.cache.storeIO.read { store throws(StoreError) in
                var entries: [StoredEntry] = []
                for key in ordered {
                    if let info = try store.info(forKey: key) {
                        entries.append(StoredEntry(key: key, version: info.version))
                    }
                }
                return entries
            }
        } catch {
            throw .store(error)
        }
    }

    /// The asset's entries (``HLSEntryMetadata``'s grouping: a resource
    /// another asset kept first is that asset's; the queue's holds decide
    /// what a removal leaves). Reads every entry of the store: the queue
    /// asks on the store's read queue.
    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
        let assetKey = completionKey(of: record, in: cache)
        let keys = ((try? HLSDownloader.entries(ofAsset: assetKey, in: cache.store)) ?? []).map(\.key)
        // The master last: the queue holds in this order and removes in
        // the reverse, and a held master is served as the selection held
        // (its media playlists must be held before it).
        return keys.filter { !ExactKey.equal($0, assetKey) } + keys.filter { ExactKey.equal($0, assetKey) }
    }

    /// The key of the asset's master playlist (the cache's key for the
    /// record's URL): a download queued under a cache key of its own is
    /// still stored under it.
    package func completionKey(of record: DownloadRecord, in cache: StreamingCache) -> String {
        // What `HLSResourceStore.resourceKey(for:)` gives the master, without
        // going through the shared registry of resource stores.
        HLSResourceKey(key: cache.cacheKey(for: record.url)).storeKey
    }

    /// `error` of an HLS step as a download failure.
    static func failure(_ error: any Error) -> DownloadError {
        switch error {
        case let error as SelectionError: .selection(String(describing: error))
        case let error as HLSPlanError: .unsupported(String(describing: error))
        case let error as HLSResourceError: error.downloadError
        default: .wrap(error)
        }
    }
}
