import Foundation
import MediaStore
import MediaSupport

/// Plays media while caching it: the shared state behind every
/// ``ResourceLoader``, ``StreamingItem`` and `OfflineDownloader`.
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
    /// Why the store this cache was meant to use could not open, for a
    /// ``shared`` cache that plays without caching; `nil` otherwise.
    public let storeOpeningError: StoreError?
    /// The store's blocking calls, off the concurrency pool.
    package let storeIO: StoreIO
    /// Orders every origin transfer of this cache: playback before
    /// preloads before downloads, at most
    /// ``StreamingConfiguration/connectionsPerHost`` per host.
    public let scheduler: FetchScheduler
    /// By the key's bytes, as the store compares keys (`ExactKey`).
    private let fetchers = Locked<[ExactKey: WeakFetcher]>([:])
    let statisticsBox = Locked(StreamingStatistics())

    /// A cache that plays `store`'s entries and fills them from `origin`.
    ///
    /// - parameter store: where the bytes are kept.
    /// - parameter origin: an ``HTTPOrigin`` by default.
    /// - parameter configuration: cache-key policy, chunking, retries and limits.
    public convenience init(
        store: MediaStore, origin: any Origin = HTTPOrigin(),
        configuration: StreamingConfiguration = StreamingConfiguration()
    ) {
        self.init(store: store, origin: origin, configuration: configuration, storeOpeningError: nil)
    }

    private init(
        store: MediaStore, origin: any Origin, configuration: StreamingConfiguration, storeOpeningError: StoreError?
    ) {
        self.store = store
        self.origin = origin
        self.configuration = configuration
        self.storeOpeningError = storeOpeningError
        self.storeIO = StoreIO(store: store)
        self.scheduler = FetchScheduler(connectionsPerHost: configuration.connectionsPerHost)
    }

    /// A cache over a store in the user's caches directory
    /// (`MediaStreaming` under `cachesDirectory`, 1 GiB), opened on first
    /// use through `MediaStore.shared(directory:configuration:)` (so an
    /// app that already opened that directory shares its store); what
    /// ``StreamingItem/init(url:)`` uses.
    ///
    /// It never stops the app: when the store cannot open (a damaged or
    /// foreign directory, no permission, a full disk), ``storeOpeningError``
    /// says why and the cache plays every resource straight from the origin
    /// without caching, reporting the reason on first use of each resource
    /// (``ResourceLoader/cachingSkippedReason``, ``ResourceEvent/cachingSkipped(reason:)``,
    /// ``StreamingItemDelegate/streamingItem(_:willPlayWithoutCachingBecause:)``);
    /// downloads fail with ``StreamingError/notCacheable(reason:)``. Its
    /// ``store`` is then an empty scratch store in the temporary directory
    /// that nothing is written to.
    public static let shared: StreamingCache = makeShared(directory: defaultSharedDirectory)

    /// Where ``shared`` keeps its store.
    static var defaultSharedDirectory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("MediaStreaming", isDirectory: true)
    }

    /// A cache like ``shared`` over the store in `directory`.
    static func makeShared(directory: URL, origin: any Origin = HTTPOrigin()) -> StreamingCache {
        do {
            let store = try MediaStore.shared(
                directory: directory, configuration: StoreConfiguration(sizeLimit: 1 << 30))
            return StreamingCache(store: store, origin: origin)
        } catch {
            return StreamingCache(unavailable: error, directory: directory, origin: origin)
        }
    }

    /// A cache whose store could not open: it plays without caching.
    private convenience init(unavailable error: StoreError, directory: URL, origin: any Origin) {
        self.init(
            store: Self.scratchStore(after: error, directory: directory), origin: origin,
            configuration: StreamingConfiguration(), storeOpeningError: error)
    }

    /// An empty store in a fresh temporary directory, standing in for one
    /// that could not open (nothing is written to it).
    private static func scratchStore(after error: StoreError, directory: URL) -> MediaStore {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "MediaStreaming-unavailable-\(UUID().uuidString)", isDirectory: true)
        do {
            return try MediaStore(directory: scratch, configuration: StoreConfiguration(initialMapSize: 1 << 20))
        } catch let scratchError {
            // Not even the temporary directory is writable: nothing can run.
            fatalError(
                "MediaStreaming: cannot open the shared store at \(directory.path) (\(error)), nor a scratch store at \(scratch.path) (\(scratchError))"
            )
        }
    }

    /// The cache key of `url` under the configured ``CacheKeyPolicy``.
    public func cacheKey(for url: URL) -> String {
        configuration.cacheKeyPolicy.key(for: url)
    }

    /// A loader for `url`, answering loading requests from the store and
    /// the origin.
    ///
    /// - parameter url: the resource's origin URL.
    /// - parameter cacheKey: overrides the policy's key for this URL.
    /// - parameter headers: sent with every origin request for it (such as `Authorization`).
    public func loader(for url: URL, cacheKey: String? = nil, headers: [String: String] = [:]) -> ResourceLoader {
        let key = cacheKey ?? self.cacheKey(for: url)
        return ResourceLoader(
            url: url, cacheKey: key, headers: headers, cache: self, fetcher: fetcher(forKey: key),
            hooks: configuration.loaderHooks)
    }

    func fetcher(forKey key: String) -> ResourceFetcher {
        let exact = ExactKey(key)
        return fetchers.withLock { fetchers in
            if let existing = fetchers[exact]?.fetcher { return existing }
            fetchers = fetchers.filter { $0.value.fetcher != nil }
            let fetcher = ResourceFetcher(
                key: key, storeIO: storeIO, origin: origin, configuration: configuration,
                cacheStatistics: statisticsBox, scheduler: scheduler,
                unavailable: storeOpeningError.map { "the cache's store could not open: \($0)" })
            fetchers[exact] = WeakFetcher(fetcher: fetcher)
            return fetcher
        }
    }

    /// Counters over every resource since the cache was made.
    public var statistics: StreamingStatistics { statisticsBox.current }

    /// The cached byte ranges of `url` (under its cache key).
    public func cachedRanges(for url: URL) throws(StoreError) -> [Range<Int>] {
        try store.cachedRanges(forKey: cacheKey(for: url))
    }

    /// Whether every byte of `url` is cached (expired or not); `false` too
    /// when the store cannot be read (``cachedRanges(for:)`` throws instead).
    public func isCached(_ url: URL) -> Bool {
        (try? store.info(forKey: cacheKey(for: url)))?.isComplete ?? false
    }
}
