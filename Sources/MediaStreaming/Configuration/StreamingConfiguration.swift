import Foundation
import MediaStore

/// How a ``StreamingCache`` fetches, keeps and revalidates resources.
public struct StreamingConfiguration: Sendable {
    /// Maps request URLs to cache keys. ``CacheKeyPolicy/url`` by default.
    public var cacheKeyPolicy: CacheKeyPolicy
    /// Chunks asked for per origin request (each request is a `Range`
    /// aligned to chunk boundaries). 4 by default (about 1 MiB).
    public var chunksPerRequest: Int
    /// A reader this close ahead of a running download waits for it
    /// rather than opening a request of its own. One request's worth by default.
    public var lookaheadBytes: Int?
    /// Expiry of entries written by the loader. `.default` uses the store's.
    public var expiry: ExpiryPolicy
    /// Whether `Cache-Control: max-age` / `Expires` set the expiry instead
    /// of ``expiry`` when the origin sends them. `false` by default.
    public var honorsCacheControl: Bool
    /// Whether a fresh entry is revalidated anyway on its first use by a
    /// fetcher. `false` by default: only expired entries are.
    public var alwaysRevalidate: Bool
    /// Retries in a row of requests that failed transiently (dropped
    /// connection, stall, slow or truncated body, 5xx) without bringing a
    /// byte that is kept; a request that brings some starts the count
    /// again. 2 by default.
    public var maxRetries: Int
    /// Seconds before the first of those retries, doubled for each next
    /// one (at most 2 s). 0.05 by default.
    public var retryBackoff: TimeInterval
    /// Seconds without a byte before a request counts as stalled and is retried. 15 by default.
    public var stallTimeout: TimeInterval
    /// Headers sent with every origin request of this cache.
    public var headers: [String: String]
    /// Back-pressure: bytes a download may hand a reader ahead of what the
    /// reader has taken. A reader further behind is let go and goes on from
    /// the store; when the resource is played without caching, the download
    /// waits for it instead. 2 MiB by default.
    public var readerBufferLimit: Int
    /// Origin connections per host at once, over every resource of the
    /// cache (``FetchScheduler``). 4 by default; playback may exceed it
    /// while a lower-priority transfer it preempted winds down.
    public var connectionsPerHost: Int
    /// The bounds of each HLS resource fetched (``HLSResourceStore``):
    /// playlists 4 MiB, 20,000 segments, lines of 64 KiB; keys 64 KiB;
    /// segments 64 MiB by default (``HLSLimits``).
    public var hlsLimits: HLSLimits
    /// Seams of the cache's fetchers, for the package's tests; none set by default.
    package var fetcherHooks = FetcherHooks()
    /// Seams of the cache's loaders, for the package's tests; none set by default.
    package var loaderHooks = LoaderHooks()
    /// Seams of the cache's items, for the package's tests; none set by default.
    package var itemHooks = ItemHooks()
    /// Seams of the HLS resource stores over the cache, for the package's tests; none set by default.
    package var resourceStoreHooks = ResourceStoreHooks()

    public init(
        cacheKeyPolicy: CacheKeyPolicy = .url, chunksPerRequest: Int = 4, lookaheadBytes: Int? = nil,
        expiry: ExpiryPolicy = .default, honorsCacheControl: Bool = false, alwaysRevalidate: Bool = false,
        maxRetries: Int = 2, stallTimeout: TimeInterval = 15, headers: [String: String] = [:],
        readerBufferLimit: Int = 2 << 20, connectionsPerHost: Int = 4, retryBackoff: TimeInterval = 0.05,
        hlsLimits: HLSLimits = HLSLimits()
    ) {
        self.cacheKeyPolicy = cacheKeyPolicy
        self.chunksPerRequest = max(1, chunksPerRequest)
        self.lookaheadBytes = lookaheadBytes
        self.expiry = expiry
        self.honorsCacheControl = honorsCacheControl
        self.alwaysRevalidate = alwaysRevalidate
        self.maxRetries = max(0, maxRetries)
        self.retryBackoff = max(0, retryBackoff)
        self.stallTimeout = stallTimeout
        self.headers = headers
        self.readerBufferLimit = max(1, readerBufferLimit)
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.hlsLimits = hlsLimits
    }
}
