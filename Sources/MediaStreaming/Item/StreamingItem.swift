import Foundation
import MediaStore

/// A `CachingPlayerItem`-style item, platform-neutral: a URL played
/// through the cache, with a delegate and an `AsyncSequence` of events.
///
/// On Apple platforms, `CachingAVPlayerItem` wraps one for `AVPlayer`;
/// anywhere, its ``loader`` answers ``LoadingRequest``s directly.
///
/// ```swift
/// let item = StreamingItem(url: trackURL, cache: cache)
/// item.delegate = self
/// item.download()                       // optional: fetch everything now
/// for await event in item.events { … }  // or use the delegate
/// ```
public final class StreamingItem: Sendable {
    /// The URL requested from the origin.
    public let url: URL
    /// The key its bytes are cached under.
    public let cacheKey: String
    /// Answers the player's loading requests.
    public let loader: ResourceLoader
    /// The item's events, as they happen (one consumer).
    public let events: AsyncStream<StreamingItemEvent>
    private let continuation: AsyncStream<StreamingItemEvent>.Continuation
    private let weakDelegate = Locked<WeakDelegate>(WeakDelegate())
    private let downloadTask = Locked<Task<Void, Never>?>(nil)
    private let observer = Locked<Task<Void, Never>?>(nil)

    private struct WeakDelegate {
        weak var delegate: (any StreamingItemDelegate)?
    }

    /// The delegate, held weakly.
    public var delegate: (any StreamingItemDelegate)? {
        get { weakDelegate.current.delegate }
        set { weakDelegate.withLock { $0.delegate = newValue } }
    }

    /// An item for `url` in ``StreamingCache/shared``, keyed by the URL.
    public convenience init(url: URL) {
        self.init(url: url, cache: .shared)
    }

    /// An item for `url` in ``StreamingCache/shared``, cached under `cacheKey`.
    public convenience init(url: URL, cacheKey: String) {
        self.init(url: url, cacheKey: cacheKey, cache: .shared)
    }

    /// An item for `url` in `cache`.
    ///
    /// - parameter url: the resource's origin URL.
    /// - parameter cacheKey: the key; the cache's ``CacheKeyPolicy`` when `nil`.
    /// - parameter cache: the cache it plays through (its store and origin).
    /// - parameter headers: sent with every origin request (such as `Authorization`).
    public init(url: URL, cacheKey: String? = nil, cache: StreamingCache, headers: [String: String] = [:]) {
        self.url = url
        self.loader = cache.loader(for: url, cacheKey: cacheKey, headers: headers)
        self.cacheKey = loader.cacheKey
        (events, continuation) = AsyncStream<StreamingItemEvent>.makeStream()
        let resourceEvents = loader.events()
        observer.withLock {
            $0 = Task { [weak self] in
                for await event in resourceEvents {
                    guard let self else { return }
                    self.relay(event)
                }
            }
        }
    }

    deinit {
        observer.current?.cancel()
        downloadTask.current?.cancel()
        continuation.finish()
    }

    private func relay(_ event: ResourceEvent) {
        switch event {
        case .ready(let info):
            send(.readyToPlay(info))
            delegate?.streamingItemReadyToPlay(self)
        case .cachingSkipped(let reason):
            send(.cachingSkipped(reason: reason))
            delegate?.streamingItem(self, willPlayWithoutCachingBecause: reason)
        case .retrying(let error):
            send(.playbackStalled(error))
            delegate?.streamingItemPlaybackStalled(self)
        case .progress, .complete, .revalidated:
            break
        }
    }

    private func send(_ event: StreamingItemEvent) { continuation.yield(event) }

    /// Downloads every missing byte into the store now, reporting progress
    /// (`didDownloadBytesSoFar`) and completion; a second call while one
    /// runs does nothing. Bytes already cached are not fetched again.
    public func download() {
        downloadTask.withLock { task in
            guard task == nil else { return }
            task = Task { [weak self] in
                guard let loader = self?.loader else { return }
                do {
                    try await loader.downloadAll { [weak self] bytes, total in
                        guard let self else { return }
                        self.send(.downloadProgress(bytes: bytes, total: total))
                        self.delegate?.streamingItem(self, didDownloadBytesSoFar: bytes, outOf: total)
                    }
                    let key = loader.cacheKey
                    let info = try await loader.cache.storeIO.read { store throws(StoreError) in
                        try store.info(forKey: key)
                    }
                    guard let self else { return }
                    self.send(.finishedDownloading(info))
                    self.delegate?.streamingItem(self, didFinishDownloading: info)
                } catch {
                    let failure = StreamingError.wrap(error)
                    guard let self, failure != .cancelled else { return }
                    self.send(.downloadFailed(failure))
                    self.delegate?.streamingItem(self, downloadingFailedWith: failure)
                }
                self?.downloadTask.withLock { $0 = nil }
            }
        }
    }

    /// Stops ``download()``; what was fetched stays cached.
    public func cancelDownload() {
        downloadTask.withLock { task in
            task?.cancel()
            task = nil
        }
    }
}
