import Foundation
import MediaStore
import MediaSupport

/// Downloads resources fully for offline playback, at most
/// ``maxParallelDownloads`` at a time (the role of `AVAssetDownloadTask`).
///
/// A completed download's entry is pinned: eviction never removes it
/// until ``release(_:)`` (``release(cacheKey:)`` for a download queued
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
    private let queue = Locked<[OfflineDownload]>([])

    public init(cache: StreamingCache, maxParallelDownloads: Int = 3) {
        self.cache = cache
        self.maxParallelDownloads = max(1, maxParallelDownloads)
    }

    /// Queues `url` (or returns its existing download, resuming it when
    /// paused or failed).
    @discardableResult
    public func download(_ url: URL, cacheKey: String? = nil, headers: [String: String] = [:]) -> OfflineDownload {
        let key = cacheKey ?? cache.cacheKey(for: url)
        let (download, isNew) = queue.withLock { queue -> (OfflineDownload, Bool) in
            if let existing = queue.first(where: { ExactKey.equal($0.cacheKey, key) && $0.state != .cancelled }) {
                return (existing, false)
            }
            let download = OfflineDownload(loader: cache.loader(for: url, cacheKey: key, headers: headers)) {
                [weak self] in
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
    public var downloads: [OfflineDownload] {
        queue.current.filter { $0.state != .cancelled }
    }

    /// The download of `url` under the cache's key for it, if any.
    public func download(for url: URL) -> OfflineDownload? {
        download(forCacheKey: cache.cacheKey(for: url))
    }

    /// The download stored under `cacheKey` (the key given to
    /// ``download(_:cacheKey:headers:)``, or the cache's key for its URL), if any.
    public func download(forCacheKey cacheKey: String) -> OfflineDownload? {
        downloads.first { ExactKey.equal($0.cacheKey, cacheKey) }
    }

    /// Unpins `url`'s entry (it becomes evictable again) and forgets its
    /// download, unless a ``DownloadQueue`` download of the same key holds
    /// it: then its download is still cancelled and forgotten, but the pin
    /// stays.
    ///
    /// The store keeps one pin flag per entry, with no owner, so this
    /// unpins whoever set the pin: a pin the app set itself
    /// (`MediaStore.setPinned`) goes too. To keep the entry, do not release
    /// it, or pin it again after. (A cancel, by contrast, leaves a pin it
    /// did not set: see ``OfflineDownload/cancel()``.)
    ///
    /// A download of the queue (read from its index in the store, so
    /// whether or not the queue is open) that is not cancelled nor removed
    /// keeps its entry pinned, and a completed one says so; this used to
    /// unpin it, and the queue went on reporting completed an entry
    /// eviction could take. The queue lets the pin go when the download is
    /// cancelled or removed, but not a pin that was set before the queue
    /// took the download (this downloader's, say): that one is not the
    /// queue's, so it stays until released again once the queue let go.
    public func release(_ url: URL) throws(StoreError) {
        try release(cacheKey: cache.cacheKey(for: url))
    }

    /// ``release(_:)`` for the download stored under `cacheKey`: the one to
    /// call for a download queued with a `cacheKey` of its own, which
    /// `release(_:)` (the cache's key for the URL) does not reach.
    public func release(cacheKey key: String) throws(StoreError) {
        let matching = queue.withLock { queue -> [OfflineDownload] in
            let matching = queue.filter { ExactKey.equal($0.cacheKey, key) }
            queue.removeAll { ExactKey.equal($0.cacheKey, key) }
            return matching
        }
        for download in matching { download.cancel() }
        guard try !DownloadIndex(store: cache.store).holdsEntry(key) else { return }
        if try cache.store.info(forKey: key) != nil {
            try cache.store.setPinned(false, forKey: key)
        }
    }

    /// Starts queued downloads while fewer than the maximum run.
    private func schedule() {
        let toStart = queue.withLock { queue -> [OfflineDownload] in
            queue.removeAll { $0.state == .cancelled }
            let running = queue.filter { $0.state == .downloading }.count
            let free = max(0, maxParallelDownloads - running)
            return Array(queue.filter { $0.state == .queued }.prefix(free))
        }
        for download in toStart { download.start() }
    }
}
