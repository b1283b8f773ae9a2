import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// Downloads files fully for offline playback, at most
/// ``maxParallelDownloads`` at a time (the role of `AVAssetDownloadTask`):
/// the in-memory convenience over the download engine (a ``MediaDownload``
/// per file, moved by ``ProgressiveDownloadPerformer``). Nothing of it
/// survives a relaunch but the held bytes: for a persistent list, with
/// conditions and priorities, use a ``DownloadQueue``.
///
/// A completed download's entry is held by the download's holder
/// (``holder(ofKey:)``, `"offline/<cache key>"`): eviction never removes
/// it until ``release(_:)`` (``release(cacheKey:)`` for a download queued
/// with a cache key of its own). Downloads share the cache's fetchers, so a
/// download and a player of the same URL fetch each byte once.
///
/// ```swift
/// let downloader = OfflineDownloader(cache: cache, maxParallelDownloads: 2)
/// let download = downloader.download(trackURL)
/// for await update in download.progressUpdates() { print(update.fraction) }
/// ```
public final class OfflineDownloader: Sendable {
    /// The cache downloads go into.
    public let cache: StreamingCache
    /// Most downloads fetching at once.
    public let maxParallelDownloads: Int
    /// Connections each download fetches over at once
    /// (``ProgressiveDownloadPerformer/connections``).
    public let connectionsPerDownload: Int
    private let queue = Locked<[MediaDownload]>([])

    /// - parameters:
    ///   - cache: where the downloads fetch from and store into.
    ///   - maxParallelDownloads: most downloads fetching at once (3 by default).
    ///   - connectionsPerDownload: connections each download fetches over
    ///     (``ProgressiveDownloadPerformer/defaultConnections`` by default;
    ///     all downloads to one host share the cache's connections per host).
    public init(
        cache: StreamingCache, maxParallelDownloads: Int = 3,
        connectionsPerDownload: Int = ProgressiveDownloadPerformer.defaultConnections
    ) {
        self.cache = cache
        self.maxParallelDownloads = max(1, maxParallelDownloads)
        self.connectionsPerDownload = max(1, connectionsPerDownload)
    }

    /// Queues `url` (or returns its existing download, resuming it when
    /// paused or failed).
    @discardableResult
    public func download(_ url: URL, cacheKey: String? = nil, headers: [String: String] = [:]) -> MediaDownload {
        let key = cacheKey ?? cache.cacheKey(for: url)
        let (download, isNew) = queue.withLock { queue -> (MediaDownload, Bool) in
            if let existing = queue.first(where: { ExactKey.equal($0.key, key) && $0.state != .cancelled }) {
                return (existing, false)
            }
            let download = MediaDownload(
                record: DownloadRecord(url: url, cacheKey: key, headers: headers, queueOrder: 0), key: key,
                holder: Self.holder(ofKey: key),
                performer: ProgressiveDownloadPerformer(connections: connectionsPerDownload), cache: cache
            ) { [weak self] in
                self?.schedule()
            }
            queue.append(download)
            return (download, true)
        }
        if !isNew { download.resume() }
        schedule()
        return download
    }

    /// Every download not cancelled, in the order queued.
    public var downloads: [MediaDownload] {
        queue.current.filter { $0.state != .cancelled }
    }

    /// The download of `url` under the cache's key for it, if any.
    public func download(for url: URL) -> MediaDownload? {
        download(forCacheKey: cache.cacheKey(for: url))
    }

    /// The download stored under `cacheKey` (the key given to
    /// ``download(_:cacheKey:headers:)``, or the cache's key for its URL), if any.
    public func download(forCacheKey cacheKey: String) -> MediaDownload? {
        downloads.first { ExactKey.equal($0.key, cacheKey) }
    }

    /// The store holder of the offline download of the entry under
    /// `cacheKey`: `"offline/<cache key>"` (a key too long for a holder
    /// name is hashed).
    public static func holder(ofKey cacheKey: String) -> String { HolderName.make("offline", cacheKey) }

    /// Cancels and forgets `url`'s download and releases its hold on the
    /// entry (it becomes evictable again, unless someone else holds it: the
    /// app with `MediaStore.setPinned`, a ``DownloadQueue`` download).
    ///
    /// An entry a version before store holds completed was pinned as the
    /// app's (the store's upgrade gave every pin to the app): release that
    /// with `MediaStore.setPinned(false, forKey:)`.
    public func release(_ url: URL) throws(StoreError) {
        try release(cacheKey: cache.cacheKey(for: url))
    }

    /// ``release(_:)`` for the download stored under `cacheKey`: the one to
    /// call for a download queued with a `cacheKey` of its own, which
    /// `release(_:)` (the cache's key for the URL) does not reach.
    public func release(cacheKey key: String) throws(StoreError) {
        let matching = queue.withLock { queue -> [MediaDownload] in
            let matching = queue.filter { ExactKey.equal($0.key, key) }
            queue.removeAll { ExactKey.equal($0.key, key) }
            return matching
        }
        for download in matching { download.cancel() }
        try cache.store.release(key, by: Self.holder(ofKey: key))
    }

    /// Starts queued downloads while fewer than the maximum run.
    private func schedule() {
        let toStart = queue.withLock { queue -> [MediaDownload] in
            queue.removeAll { $0.state == .cancelled }
            let running = queue.filter { $0.state == .downloading }.count
            let free = max(0, maxParallelDownloads - running)
            return Array(queue.filter { $0.state == .queued }.prefix(free))
        }
        for download in toStart { download.start() }
    }
}
