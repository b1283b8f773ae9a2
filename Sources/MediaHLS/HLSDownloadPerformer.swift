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
/// In a queue with a `DownloadQueueConfiguration/backgroundTransfer`,
/// each resource is fetched as a background download-to-file task
/// (at most ``backgroundTasks`` scheduled at once) and its file imported
/// into the store as a fetched one is stored: the same entries, holds and
/// metadata (see MediaDownloads' Background Transfers article).
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
    /// Background tasks scheduled at once by one download, when its queue
    /// has a `DownloadQueueConfiguration/backgroundTransfer`. 16 by default:
    /// while the app is suspended nothing schedules more, so the tasks
    /// scheduled are what moves until the system wakes it; and each task
    /// is an entry of the queue's `TransferInbox` (bounded), a file on
    /// disk once it ends, and a cancel when the download stops. Below 1
    /// counts as 1.
    public var backgroundTasks = 16
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
        var background: HLSBackgroundFetcher?
        if let fetch = context.background {
            background = await HLSBackgroundFetcher.begin(fetch, record: record, context: context)
        }
        let run = HLSRun(
            record: record, performer: self, resources: resources ?? HLSResourceStore(cache: context.cache),
            context: context, background: background)
        let plan: HLSDownloadPlan
        do {
            plan = try await run.perform()
        } catch {
            // Failed (live, and not cancelled by its queue going away): no
            // task of it goes on; its other resources were cancelled while it
            // still counted (live), which leaves their tasks running. A
            // stopped run's resources cancelled their own tasks as it
            // stopped; cancelling by the download's id here, once it ends,
            // would cancel the tasks of a run resumed meanwhile (same names).
            if let background, context.isLive(), !Task.isCancelled { await background.cancelAll() }
            throw error
        }
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
