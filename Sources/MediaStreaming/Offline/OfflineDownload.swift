import Foundation
import MediaStore

/// One resource downloaded for offline use by an ``OfflineDownloader``
/// (the role of `AVAssetDownloadTask`): progress as a `Foundation.Progress`
/// and as an async sequence; pause, resume, cancel.
public final class OfflineDownload: Sendable {
    /// Where a download stands.
    public enum State: Sendable, Equatable {
        /// Waiting for a free slot.
        case queued
        /// Fetching.
        case downloading
        /// Paused; ``OfflineDownload/resume()`` continues from the missing chunks.
        case paused
        /// Every byte is in the store, and the entry is pinned.
        case completed
        /// Failed; ``OfflineDownload/resume()`` retries.
        case failed(StreamingError)
        /// Cancelled; what was fetched stays cached but unpinned.
        case cancelled
    }

    /// The URL downloaded.
    public let url: URL
    /// Its cache key.
    public let cacheKey: String
    /// Byte progress: `totalUnitCount` is the length once known.
    public let progress: Progress
    let loader: ResourceLoader
    private let status = Locked<(state: State, bytes: Int, total: Int)>((.queued, 0, 0))
    private let observers = Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>([:])
    private let task = Locked<Task<Void, Never>?>(nil)
    private let onChange: @Sendable () -> Void

    init(loader: ResourceLoader, onChange: @escaping @Sendable () -> Void) {
        self.url = loader.url
        self.cacheKey = loader.cacheKey
        self.loader = loader
        self.onChange = onChange
        self.progress = Progress(totalUnitCount: 0)
    }

    /// The current state.
    public var state: State { status.current.state }

    /// The current snapshot.
    public var snapshot: DownloadProgress {
        let current = status.current
        return DownloadProgress(bytes: current.bytes, total: current.total, state: current.state)
    }

    /// Snapshots from now on (the current one first), until the download
    /// completes, fails or is cancelled.
    public func progressUpdates() -> AsyncStream<DownloadProgress> {
        let (stream, continuation) = AsyncStream<DownloadProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        // Registered before the state is read: an update to a final state
        // either comes after this (and finishes the stream) or is seen
        // below. Reading first lost a completion landing in between, and
        // `completion()` then waited forever.
        observers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.observers.withLock { $0.removeValue(forKey: id) } }
        let current = snapshot
        continuation.yield(current)
        if endsUpdates(current.state) {
            observers.withLock { _ = $0.removeValue(forKey: id) }
            continuation.finish()
        }
        return stream
    }

    /// Waits until the download completes (returns) or fails or is cancelled (throws).
    public func completion() async throws(StreamingError) {
        for await update in progressUpdates() {
            switch update.state {
            case .completed: return
            case .failed(let error): throw error
            case .cancelled: throw .cancelled
            default: continue
            }
        }
        if case .failed(let error) = state { throw error }
        if state == .cancelled { throw .cancelled }
    }

    /// Stops fetching; ``resume()`` continues with the missing chunks only.
    public func pause() {
        guard state == .downloading || state == .queued else { return }
        stopTask()
        update(state: .paused)
        onChange()
    }

    /// Queues a paused or failed download again.
    public func resume() {
        switch state {
        case .paused, .failed: update(state: .queued)
        default: return
        }
        onChange()
    }

    /// Stops for good; fetched bytes stay cached (unpinned, so evictable).
    public func cancel() {
        guard !isFinal(state) else { return }
        stopTask()
        update(state: .cancelled)
        onChange()
    }

    func start() {
        guard state == .queued else { return }
        update(state: .downloading)
        let running = Task { [weak self] in
            guard let self else { return }
            do {
                let version = try await self.loader.downloadAll { [weak self] bytes, total in
                    self?.update(bytes: bytes, total: total)
                }
                // Pins the version downloaded, never a replacement of it.
                let key = self.cacheKey
                try await self.loader.cache.storeIO.write { store throws(StoreError) in
                    try store.setPinned(true, forKey: key, version: version)
                }
                // Cancelled (or released) once every byte was in: neither the
                // write above nor this task noticed. It stays cancelled, and
                // its bytes evictable, as a cancel promises.
                if !self.update(state: .completed, unless: .cancelled) {
                    try? await self.loader.cache.storeIO.write { store throws(StoreError) in
                        try store.setPinned(false, forKey: key, version: version)
                    }
                }
            } catch {
                let failure = StreamingError.wrap(error)
                guard failure != .cancelled, self.state == .downloading else { return }
                self.update(state: .failed(failure))
            }
            self.onChange()
        }
        task.withLock { $0 = running }
    }

    private func stopTask() {
        task.withLock { task in
            task?.cancel()
            task = nil
        }
    }

    private func isFinal(_ state: State) -> Bool {
        switch state {
        case .completed, .cancelled: true
        default: false
        }
    }

    /// Whether a stream of updates ends with `state` (a failed download
    /// can be resumed, but its streams end: ask for new ones).
    private func endsUpdates(_ state: State) -> Bool {
        if case .failed = state { return true }
        return isFinal(state)
    }

    /// Applies a change and tells observers; with `unless`, only when the
    /// state is not that one (checked and changed at once). Returns whether
    /// the change was made.
    @discardableResult
    private func update(state: State? = nil, bytes: Int? = nil, total: Int? = nil, unless refused: State? = nil)
        -> Bool
    {
        let current = status.withLock { status -> (state: State, bytes: Int, total: Int)? in
            if let refused, status.state == refused { return nil }
            if let state { status.state = state }
            if let total { status.total = total }
            if let bytes { status.bytes = bytes }
            if status.state == .completed { status.bytes = status.total }
            return status
        }
        guard let current else { return false }
        progress.totalUnitCount = Int64(current.total)
        progress.completedUnitCount = Int64(current.bytes)
        let snapshot = DownloadProgress(bytes: current.bytes, total: current.total, state: current.state)
        let final = endsUpdates(current.state)
        let continuations = observers.withLock { observers -> [AsyncStream<DownloadProgress>.Continuation] in
            defer { if final { observers = [:] } }
            return Array(observers.values)
        }
        for continuation in continuations {
            continuation.yield(snapshot)
            if final { continuation.finish() }
        }
        return true
    }
}
