import Foundation
import MediaStore
import MediaSupport

/// Warms the first bytes or seconds of resources a player will want next
/// (the next tracks of a playlist), at ``FetchPriority/preload``: their
/// transfers yield to players and go before downloads. Preloaded bytes are
/// ordinary cached chunks, evictable like any others.
///
/// ```swift
/// let preloader = Preloader(cache: cache)
/// preloader.preload(nextTrack, duration: 10)              // the first 10 s
/// preloader.keepWarm(playlist, current: index, ahead: 3, amount: .duration(seconds: 10))
/// ```
public final class Preloader: Sendable {
    /// The cache preloads go into.
    public let cache: StreamingCache
    /// By the key's bytes, as the store compares keys (`ExactKey`).
    private let tasks = Locked<[ExactKey: PreloadTask]>([:])

    public init(cache: StreamingCache) {
        self.cache = cache
    }

    /// Caches the first `bytes` bytes of `url` (its last chunk stored short).
    @discardableResult
    public func preload(_ url: URL, bytes: Int, cacheKey: String? = nil, headers: [String: String] = [:])
        -> PreloadTask
    {
        preload(url, amount: .bytes(bytes), cacheKey: cacheKey, headers: headers)
    }

    /// Caches the bytes that play the first `duration` seconds of `url`
    /// (see ``PreloadAmount/duration(seconds:fallbackBytes:)``).
    @discardableResult
    public func preload(_ url: URL, duration: Double, cacheKey: String? = nil, headers: [String: String] = [:])
        -> PreloadTask
    {
        preload(url, amount: .duration(seconds: duration), cacheKey: cacheKey, headers: headers)
    }

    /// Starts a preload of `url`, or returns the one running for its cache
    /// key with the same amount (another amount replaces it).
    @discardableResult
    public func preload(
        _ url: URL, amount: PreloadAmount, cacheKey: String? = nil, headers: [String: String] = [:]
    ) -> PreloadTask {
        let cacheKey = cacheKey ?? cache.cacheKey(for: url)
        let loader = cache.loader(for: url, cacheKey: cacheKey, headers: headers)
        let key = ExactKey(cacheKey)
        return tasks.withLock { tasks in
            if let running = tasks[key], running.amount == amount, !running.isCancelled { return running }
            tasks[key]?.cancel()
            let task = PreloadTask(
                url: url, cacheKey: cacheKey, amount: amount,
                task: Task { try await Self.run(loader, amount: amount) })
            tasks[key] = task
            return task
        }
    }

    /// Cancels the preload of `url`, if one runs (what it cached stays).
    public func cancelPreload(_ url: URL, cacheKey: String? = nil) {
        let key = ExactKey(cacheKey ?? cache.cacheKey(for: url))
        tasks.withLock { $0.removeValue(forKey: key) }?.cancel()
    }

    /// Cancels every preload.
    public func cancelAll() {
        for task in tasks.withLock({ tasks in
            defer { tasks = [:] }; return Array(tasks.values)
        }) { task.cancel() }
    }

    /// The playlist window: keeps the `ahead` items after `current` in
    /// `playlist` warmed (preloads them) and cancels the preloads of every
    /// other item. Call it again when the current item changes.
    ///
    /// - returns: the preloads of the window, in playlist order.
    @discardableResult
    public func keepWarm(_ playlist: [URL], current: Int, ahead: Int, amount: PreloadAmount) -> [PreloadTask] {
        let window = PlaylistWindow.next(ahead, after: current, count: playlist.count).map { playlist[$0] }
        let wanted = Set(window.map { ExactKey(cache.cacheKey(for: $0)) })
        let dropped = tasks.withLock { tasks -> [PreloadTask] in
            let dropped = tasks.filter { !wanted.contains($0.key) }.map(\.value)
            for task in dropped { tasks[ExactKey(task.cacheKey)] = nil }
            return dropped
        }
        for task in dropped { task.cancel() }
        return window.map { preload($0, amount: amount) }
    }

    /// The preloads started and not cancelled, by cache key (of two keys
    /// that are equal strings but different bytes, one is listed).
    public var running: [String: PreloadTask] {
        let running = tasks.withLock { $0.filter { !$0.value.isCancelled } }
        return Dictionary(running.map { ($0.key.string, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// Bytes of a file's start a duration estimate first reads, and by how
    /// many (at most a chunk) its prefix grows when the estimate needs more.
    static let estimateStep = 64 * 1024

    /// Resolves `amount` to a byte count and caches that prefix.
    private static func run(_ loader: ResourceLoader, amount: PreloadAmount) async throws -> Int {
        let chunkSize = loader.cache.store.configuration.chunkSize
        switch amount {
        case .bytes(let bytes):
            let info = try await loader.contentInformation(priority: .preload, firstRequestBytes: bytes)
            let end = min(max(0, bytes), info.contentLength)
            try await loader.prefetch(0..<end, length: info.contentLength, priority: .preload)
            return end
        case .duration(let seconds, let fallbackBytes):
            // The first request asks for what an estimate usually needs; the
            // prefix grows by as much at a time (at most a chunk), and what is
            // fetched to find the end of the time asked for stays within that
            // of it.
            let headerBytes = Self.estimateStep
            let step = min(headerBytes, chunkSize)
            let info = try await loader.contentInformation(priority: .preload, firstRequestBytes: headerBytes)
            let length = info.contentLength
            var prefixLength = min(length, headerBytes)
            var trailer: (offset: Int, bytes: [UInt8])?
            for _ in 0..<256 {
                try await loader.prefetch(0..<prefixLength, length: length, priority: .preload)
                let prefix = try await loader.storedBytes(0..<prefixLength)
                switch PlaybackPrefix.estimate(toPlay: seconds, prefix: prefix, trailer: trailer, totalLength: length) {
                case .length(let bytes, _):
                    try await loader.prefetch(0..<bytes, length: length, priority: .preload)
                    return bytes
                case .needsPrefix(let bytes):
                    prefixLength = min(length, max(prefixLength + 1, min(bytes, prefixLength + step)))
                case .needsRange(let range):
                    let clamped = range.clamped(to: 0..<length)
                    // Stored only when that costs little more than the range: a
                    // chunk holds its bytes from its start (or the prefix's end).
                    let chunkStart = clamped.lowerBound / chunkSize * chunkSize
                    let storedFrom = chunkStart < prefixLength ? min(prefixLength, clamped.lowerBound) : chunkStart
                    if clamped.upperBound - storedFrom <= 2 * clamped.count {
                        try await loader.prefetch(clamped, length: length, priority: .preload)
                        trailer = (clamped.lowerBound, try await loader.storedBytes(clamped))
                    } else {
                        trailer = (clamped.lowerBound, try await loader.unstoredBytes(clamped))
                    }
                case .unsupported:
                    let bytes = min(fallbackBytes, length)
                    try await loader.prefetch(0..<bytes, length: length, priority: .preload)
                    return bytes
                }
            }
            let bytes = min(fallbackBytes, length)
            try await loader.prefetch(0..<bytes, length: length, priority: .preload)
            return bytes
        }
    }
}
