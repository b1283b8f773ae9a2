import Foundation
import MediaStreaming

/// Keeps the loader of each recently played origin URL for a while, so
/// that the requests a player makes one after another (ffmpeg opens,
/// probes, seeks: many requests per track) share one fetcher, whose
/// content information and running downloads stay in memory between them.
/// A loader unused for `idleSeconds` is let go (its fetcher then resolves
/// the content information again on the next request, revalidating an
/// expired entry); at most `capacity` are kept.
final class LoaderPool: @unchecked Sendable {
    /// The cache every loader reads and fills.
    let cache: StreamingCache
    private let idleSeconds: TimeInterval
    private let capacity: Int
    private let lock = NSLock()
    private var loaders: [String: (loader: ResourceLoader, lastUse: Date)] = [:]

    init(cache: StreamingCache, idleSeconds: TimeInterval = 30, capacity: Int = 64) {
        self.cache = cache
        self.idleSeconds = idleSeconds
        self.capacity = capacity
    }

    /// The loader for `url`, kept or new.
    func loader(for url: URL) -> ResourceLoader {
        let now = Date()
        return lock.withLock {
            let idle = idleSeconds
            if loaders.values.contains(where: { now.timeIntervalSince($0.lastUse) >= idle }) {
                loaders = loaders.filter { now.timeIntervalSince($0.value.lastUse) < idle }
            }
            let key = url.absoluteString
            let loader = loaders[key]?.loader ?? cache.loader(for: url)
            loaders[key] = (loader, now)
            if loaders.count > capacity, let oldest = loaders.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
                loaders[oldest] = nil
            }
            return loader
        }
    }

    /// Lets every loader go.
    func removeAll() {
        lock.withLock { loaders.removeAll() }
    }
}
