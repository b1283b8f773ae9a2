import Foundation
import MediaStore

/// Plays media while caching it: the shared state behind every
/// ``ResourceLoader``, ``StreamingItem`` and ``OfflineDownloader``.
///
/// One cache per store. Every reader of one cache key, whichever item
/// or downloader it belongs to, goes through one fetcher, so the bytes
/// of a resource are fetched once.
///
/// ```swift
/// let store = try MediaStore(directory: cachesURL)
/// let cache = StreamingCache(store: store, configuration: StreamingConfiguration(
///     cacheKeyPolicy: .droppingQueryItems(["token"])))
/// let item = StreamingItem(url: trackURL, cache: cache)
/// ```
public final class StreamingCache: Sendable {
    /// Holds a fetcher without keeping it alive.
    private struct WeakFetcher {
        weak var fetcher: ResourceFetcher?
    }

    /// The store bytes are kept in.
    public let store: MediaStore
    /// Where missing bytes come from.
    public let origin: any Origin
    /// How resources are fetched, keyed and revalidated.
    public let configuration: StreamingConfiguration
    private let fetchers = Locked<[String: WeakFetcher]>([:])
    let statisticsBox = Locked(StreamingStatistics())

    /// - parameter origin: an ``HTTPOrigin`` by default.
    public init(store: MediaStore, origin: any Origin = HTTPOrigin(), configuration: StreamingConfiguration = StreamingConfiguration()) {
        self.store = store
        self.origin = origin
        self.configuration = configuration
    }

    /// A cache over a store in the user's caches directory
    /// (`MediaStreaming` under `cachesDirectory`), opened on first use;
    /// what ``StreamingItem/init(url:)`` uses.
    public static let shared: StreamingCache = {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let directory = caches.appendingPathComponent("MediaStreaming", isDirectory: true)
        do {
            return StreamingCache(store: try MediaStore(directory: directory, configuration: StoreConfiguration(sizeLimit: 1 << 30)))
        } catch {
            fatalError("MediaStreaming: cannot open the shared store at \(directory.path): \(error)")
        }
    }()

    /// The cache key of `url` under the configured ``CacheKeyPolicy``.
    public func cacheKey(for url: URL) -> String {
        configuration.cacheKeyPolicy.key(for: url)
    }

    /// A loader for `url`, answering loading requests from the store and
    /// the origin.
    ///
    /// - parameter cacheKey: overrides the policy's key for this URL.
    /// - parameter headers: sent with every origin request for it (such as `Authorization`).
    public func loader(for url: URL, cacheKey: String? = nil, headers: [String: String] = [:]) -> ResourceLoader {
        let key = cacheKey ?? self.cacheKey(for: url)
        return ResourceLoader(url: url, cacheKey: key, headers: headers, cache: self, fetcher: fetcher(forKey: key))
    }

    func fetcher(forKey key: String) -> ResourceFetcher {
        fetchers.withLock { fetchers in
            if let existing = fetchers[key]?.fetcher { return existing }
            fetchers = fetchers.filter { $0.value.fetcher != nil }
            let fetcher = ResourceFetcher(
                key: key, store: store, origin: origin, configuration: configuration, cacheStatistics: statisticsBox)
            fetchers[key] = WeakFetcher(fetcher: fetcher)
            return fetcher
        }
    }

    /// Counters over every resource since the cache was made.
    public var statistics: StreamingStatistics { statisticsBox.current }

    /// The cached byte ranges of `url` (under its cache key).
    public func cachedRanges(for url: URL) throws(StoreError) -> [Range<Int>] {
        try store.cachedRanges(forKey: cacheKey(for: url))
    }

    /// Whether every byte of `url` is cached (expired or not).
    public func isCached(_ url: URL) -> Bool {
        (try? store.info(forKey: cacheKey(for: url)))?.isComplete ?? false
    }
}
