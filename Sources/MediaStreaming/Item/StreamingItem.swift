import Foundation
import MediaStore
import MediaSupport

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
    /// The running ``download()`` and its run number: a run that ends
    /// clears the task only if it is still its own (a later run's stays).
    private let downloadTask = Locked<(run: Int, task: Task<Void, Never>?)>((0, nil))
    /// The cache's seams for the package's tests (``ItemHooks/downloadEnd``).
    private let hooks: ItemHooks
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
        self.hooks = cache.configuration.itemHooks
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
        downloadTask.current.task?.cancel()
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
        downloadTask.withLock { slot in
            guard slot.task == nil else { return }
            slot.run += 1
            let run = slot.run
            slot.task = Task { [weak self] in
                guard let loader = self?.loader else { return }
                let result = await Self.downloadAll(loader) { [weak self] bytes, total in
                    guard let self else { return }
                    self.send(.downloadProgress(bytes: bytes, total: total))
                    self.delegate?.streamingItem(self, didDownloadBytesSoFar: bytes, outOf: total)
                }
                let gate = self?.hooks.downloadEnd.current
                await gate?()
                self?.finishDownload(run, with: result)
            }
        }
    }

    /// The task of the running ``download()``, if any.
    var runningDownload: Task<Void, Never>? { downloadTask.current.task }

    /// Fetches every missing byte of `loader`'s resource; its entry then.
    private static func downloadAll(
        _ loader: ResourceLoader, progress: @escaping @Sendable (Int, Int) -> Void
    ) async -> Result<EntryInfo?, StreamingError> {
        do {
            try await loader.downloadAll(progress: progress)
            let key = loader.cacheKey
            return .success(
                try await loader.cache.storeIO.read { store throws(StoreError) in
                    try store.info(forKey: key)
                })
        } catch {
            return .failure(StreamingError.wrap(error))
        }
    }

    /// Ends download run `run`: lets go of its task unless a later run
    /// replaced it (a run cancelled by ``cancelDownload()`` may end after
    /// the next ``download()`` started, whose task must stay cancellable),
    /// then reports the result.
    private func finishDownload(_ run: Int, with result: Result<EntryInfo?, StreamingError>) {
        downloadTask.withLock { slot in
            if slot.run == run { slot.task = nil }
        }
        switch result {
        case .success(let info):
            send(.finishedDownloading(info))
            delegate?.streamingItem(self, didFinishDownloading: info)
        case .failure(let failure):
            guard failure != .cancelled else { return }
            send(.downloadFailed(failure))
            delegate?.streamingItem(self, downloadingFailedWith: failure)
        }
    }

    /// Stops ``download()``; what was fetched stays cached.
    public func cancelDownload() {
        downloadTask.withLock { slot in
            slot.task?.cancel()
            slot.task = nil
        }
    }
}
