import Foundation
import HLSPlaylist
import MediaStore

/// Performs the HLS downloads of a ``DownloadQueue``: records of its
/// kind (`hls` by default) are fetched by an ``HLSDownloader`` with the variant and
/// renditions it was made with, so HLS assets are queued, kept across
/// relaunches and resumed like progressive files. A resumed record
/// fetches only the resources the store lacks.
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
    /// Resources fetched at once by one download.
    public let parallelFetches: Int
    /// Where its downloads fetch and store resources (over the queue's
    /// cache); `nil`: a store of their own for each record.
    public let resources: HLSResourceStore?

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
    public init(
        kind: String = Self.kind, variant: VariantChoice = .first, audio: RenditionRequest = .automatic,
        subtitles: RenditionRequest = .none, parallelFetches: Int = 4, resources: HLSResourceStore? = nil
    ) {
        self.kind = kind
        self.variant = variant
        self.audio = audio
        self.subtitles = subtitles
        self.parallelFetches = parallelFetches
        self.resources = resources
    }

    public func perform(
        _ record: DownloadRecord, in cache: StreamingCache, priority: FetchPriority,
        progress: @escaping @Sendable (Int, Int?) -> Void
    ) async throws(DownloadFailure) -> [StoredEntry] {
        let downloader = HLSDownloader(
            resources: resources ?? HLSResourceStore(cache: cache), parallelFetches: parallelFetches)
        let download = downloader.download(
            record.url, variant: variant, audio: audio, subtitles: subtitles, headers: record.headers,
            priority: priority, holder: DownloadQueue.holder(of: record.id))
        do {
            try await withTaskCancellationHandler {
                let updates = Task {
                    for await update in download.progressUpdates() { progress(update.bytes, nil) }
                }
                defer { updates.cancel() }
                try await download.completion()
            } onCancel: {
                download.cancel()
            }
        } catch let error as HLSDownloadError {
            throw Self.failure(error)
        } catch {
            throw .userCancelled
        }
        let bytes = download.snapshot.bytes
        progress(bytes, bytes)
        // Every entry of the store is read: on its read queue, not a thread of the concurrency pool.
        let url = record.url
        do {
            return try await cache.storeIO.read { store throws(StoreError) in
                try downloader.entries(of: url, in: store).map { StoredEntry(key: $0.key, version: $0.version) }
            }
        } catch {
            throw .storage(String(describing: error))
        }
    }

    /// The asset's entries (``HLSEntryMetadata``'s grouping: a resource
    /// another asset kept first is that asset's; the queue's holds decide
    /// what a removal leaves). Reads every entry of the store: the queue
    /// asks on the store's read queue.
    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
        let downloader = HLSDownloader(cache: cache, parallelFetches: parallelFetches)
        let assetKey = downloader.resources.resourceKey(for: record.url).storeKey
        let keys = ((try? downloader.entries(of: record.url)) ?? []).map(\.key)
        // The master last: the queue holds in this order and removes in
        // the reverse, and a held master is served as the selection held
        // (its media playlists must be held before it).
        return keys.filter { !ExactKey.equal($0, assetKey) } + keys.filter { ExactKey.equal($0, assetKey) }
    }

    /// The key of the asset's master playlist (the cache's key for the
    /// record's URL): a download queued under a cache key of its own is
    /// still stored under it.
    func completionKey(of record: DownloadRecord, in cache: StreamingCache) -> String {
        // What `HLSResourceStore.resourceKey(for:)` gives the master, without
        // going through the shared registry of resource stores.
        HLSResourceKey(key: cache.cacheKey(for: record.url)).storeKey
    }

    static func failure(_ error: HLSDownloadError) -> DownloadFailure {
        switch error {
        case .streaming(let streaming): DownloadFailure(streaming)
        case .plan(let plan): .unsupported(String(describing: plan))
        default: .transfer(error.description)
        }
    }
}
