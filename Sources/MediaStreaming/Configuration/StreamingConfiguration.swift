import Foundation
import MediaStore

/// How a ``StreamingCache`` fetches, keeps and revalidates resources.
public struct StreamingConfiguration: Sendable {
    /// Maps request URLs to cache keys. ``CacheKeyPolicy/url`` by default.
    public var cacheKeyPolicy: CacheKeyPolicy
    /// Chunks asked for per origin request (each request is a `Range`
    /// aligned to chunk boundaries); for a player, a request after one that
    /// brought its whole range asks for 4 times as much. 4 by default (about 1 MiB).
    public var chunksPerRequest: Int
    /// The furthest ahead of a running transfer a reader waits for it
    /// rather than opening a request of its own. Within a chunk of the
    /// transfer it always waits; further, only when the transfer, at the
    /// rate and round trip measured on its response, brings the reader's
    /// offset sooner than a request of its own would. One request's worth by default.
    public var lookaheadBytes: Int?
    /// Expiry of entries written by the loader. `.default` uses the store's.
    public var expiry: ExpiryPolicy
    /// Whether `Cache-Control: max-age` / `Expires` set the expiry instead
    /// of ``expiry`` when the origin sends them. `false` by default.
    public var honorsCacheControl: Bool
    /// Whether a fresh entry is revalidated anyway on its first use by a
    /// fetcher. `false` by default: only expired entries are.
    public var alwaysRevalidate: Bool
    /// When a failed origin request is tried again (``RetryPolicy``): at
    /// most 2 retries in a row of requests that kept no byte, after
    /// 50 ms, doubled for each next one, at most 2 s, by default.
    public var retryPolicy: RetryPolicy
    /// Time without a byte before a request counts as stalled and is retried. 15 s by default.
    public var stallTimeout: Duration
    /// Headers sent with every origin request of this cache.
    public var headers: [String: String]
    /// Back-pressure: bytes a transfer may hand a reader ahead of what the
    /// reader has taken. A reader further behind is let go and goes on from
    /// the store; when the resource is played without caching, the transfer
    /// waits for it instead. 2 MiB by default.
    public var readerBufferLimit: Int
    /// Origin connections per host at once, over every resource of the
    /// cache (``FetchScheduler``). 4 by default; playback may exceed it
    /// while a lower-priority transfer it preempted winds down.
    public var connectionsPerHost: Int
    /// The bounds of each HLS resource fetched (`HLSResourceStore`):
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
        retryPolicy: RetryPolicy = RetryPolicy(), stallTimeout: Duration = .seconds(15),
        headers: [String: String] = [:], readerBufferLimit: Int = 2 << 20, connectionsPerHost: Int = 4,
        hlsLimits: HLSLimits = HLSLimits()
    ) {
        self.cacheKeyPolicy = cacheKeyPolicy
        self.chunksPerRequest = max(1, chunksPerRequest)
        self.lookaheadBytes = lookaheadBytes
        self.expiry = expiry
        self.honorsCacheControl = honorsCacheControl
        self.alwaysRevalidate = alwaysRevalidate
        self.retryPolicy = retryPolicy
        self.stallTimeout = stallTimeout
        self.headers = headers
        self.readerBufferLimit = max(1, readerBufferLimit)
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.hlsLimits = hlsLimits
    }
}
