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
    /// The state and counts, with the number of the latest run started:
    /// a run's results are applied only while its number is still the
    /// latest (checked and applied under this lock), so a stopped run that
    /// ends after ``resume()`` started the next one changes nothing.
    private let status = Locked<(state: State, bytes: Int, total: Int, run: Int)>((.queued, 0, 0, 0))
    private let observers = Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>([:])
    /// The task of the latest run started, with its number.
    private let task = Locked<(run: Int, task: Task<Void, Never>?)>((0, nil))
    /// Awaited by a run once its download ended (done or failed), before
    /// it applies the result.
    let resultGateForTesting = Locked<(@Sendable () async -> Void)?>(nil)
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
        guard let run = beginRun() else { return }
        let running = Task { [weak self] in
            guard let self else { return }
            let applied: Bool
            do {
                let version = try await self.loader.downloadAll { [weak self] bytes, total in
                    self?.update(run: run, bytes: bytes, total: total)
                }
                let gate = self.resultGateForTesting.current
                await gate?()
                applied = try await self.complete(run, version: version)
            } catch {
                let failure = StreamingError.wrap(error)
                let gate = self.resultGateForTesting.current
                await gate?()
                guard failure != .cancelled else { return }
                applied = self.update(run: run, state: .failed(failure), onlyFrom: .downloading)
            }
            if applied { self.onChange() }
        }
        task.withLock { slot in
            // A later run may have been stored first: this one is over.
            guard slot.run < run else { return running.cancel() }
            slot = (run, running)
        }
        // Paused (or cancelled) before its task was stored: stopped then.
        let current = status.current
        if current.run != run || current.state != .downloading { running.cancel() }
    }

    /// The task of the latest run, if not stopped.
    var taskForTesting: Task<Void, Never>? { task.current.task }

    /// Marks a queued download downloading, as run number one more than
    /// the last; `nil` when it is not queued (another call started it).
    private func beginRun() -> Int? {
        let begun = status.withLock { status -> (state: State, bytes: Int, total: Int, run: Int)? in
            guard status.state == .queued else { return nil }
            status.state = .downloading
            status.run += 1
            return status
        }
        guard let begun else { return nil }
        publish(begun)
        return begun.run
    }

    /// Pins the version `run` downloaded (never a replacement of it) and
    /// marks the download completed, unless it was cancelled meanwhile or
    /// a later run started. Both in one store write: writes run one at a
    /// time, so no other run's pin or unpin comes in between. Returns
    /// whether it completed.
    private func complete(_ run: Int, version: UInt64) async throws(StoreError) -> Bool {
        let key = cacheKey
        let snapshot = try await loader.cache.storeIO.write {
            [self] store throws(StoreError) -> (state: State, bytes: Int, total: Int, run: Int)? in
            let current = status.current
            // A later run pins what it downloads; a cancelled one stays unpinned.
            guard current.run == run, current.state != .cancelled else { return nil }
            try store.setPinned(true, forKey: key, version: version)
            // Cancelled once every byte was in: neither the write above nor
            // this task noticed. It stays cancelled, and its bytes
            // evictable, as a cancel promises.
            guard let completed = apply(run: run, state: .completed, unless: .cancelled) else {
                try store.setPinned(false, forKey: key, version: version)
                return nil
            }
            return completed
        }
        guard let snapshot else { return false }
        publish(snapshot)
        return true
    }

    private func stopTask() {
        task.withLock { slot in
            slot.task?.cancel()
            slot.task = nil
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

    /// Applies a change and tells observers; with `run`, only while that
    /// run is the latest; with `unless`, only when the state is not that
    /// one; with `onlyFrom`, only when it is that one (checked and changed
    /// at once). Returns whether the change was made.
    @discardableResult
    private func update(
        run: Int? = nil, state: State? = nil, bytes: Int? = nil, total: Int? = nil, unless refused: State? = nil,
        onlyFrom required: State? = nil
    ) -> Bool {
        guard
            let current = apply(
                run: run, state: state, bytes: bytes, total: total, unless: refused, onlyFrom: required)
        else { return false }
        publish(current)
        return true
    }

    /// The change of ``update(run:state:bytes:total:unless:onlyFrom:)``
    /// without telling anyone: the new status, or `nil` when refused.
    private func apply(
        run: Int? = nil, state: State? = nil, bytes: Int? = nil, total: Int? = nil, unless refused: State? = nil,
        onlyFrom required: State? = nil
    ) -> (state: State, bytes: Int, total: Int, run: Int)? {
        status.withLock { status -> (state: State, bytes: Int, total: Int, run: Int)? in
            if let run, status.run != run { return nil }
            if let refused, status.state == refused { return nil }
            if let required, status.state != required { return nil }
            if let state { status.state = state }
            if let total { status.total = total }
            if let bytes { status.bytes = bytes }
            if status.state == .completed { status.bytes = status.total }
            return status
        }
    }

    /// Tells `Progress` and the observers of the status `current`.
    private func publish(_ current: (state: State, bytes: Int, total: Int, run: Int)) {
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
    }
}
