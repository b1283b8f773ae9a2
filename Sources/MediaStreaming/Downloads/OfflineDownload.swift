import Foundation
import MediaStore
import MediaSupport

/// One resource downloaded for offline use by an ``OfflineDownloader``
/// (the role of `AVAssetDownloadTask`): progress as a `Foundation.Progress`
/// and as an async sequence; pause, resume, cancel.
///
/// ``pause()``, ``resume()`` and ``cancel()`` may be called from any
/// thread, at once: each checks the state and changes it in one step, so
/// two calls never interleave (one acts on the other's outcome). What each
/// does in each state is in its documentation; in short, a cancelled
/// download stays cancelled, and a stopped run's late result is ignored.
public final class OfflineDownload: Sendable {
    /// Where a download stands.
    public enum State: Sendable, Equatable {
        /// Waiting for a free slot.
        case queued
        /// Fetching.
        case downloading
        /// Paused; ``OfflineDownload/resume()`` continues from the missing chunks.
        case paused
        /// Every byte is in the store, and the entry is held by ``OfflineDownload/holder``.
        case completed
        /// Failed; ``OfflineDownload/resume()`` retries.
        case failed(StreamingError)
        /// Cancelled; what was fetched stays cached, not held by the
        /// download (someone else's holds stay).
        case cancelled
    }

    /// The URL downloaded.
    public let url: URL
    /// Its cache key.
    public let cacheKey: String
    /// The store holder that holds its entry once complete
    /// (``OfflineDownloader/holder(ofKey:)``).
    public let holder: String
    /// Byte progress: `totalUnitCount` is the length once known.
    public let progress: Progress
    let loader: ResourceLoader
    /// The state and counts, with the number of the latest run started.
    /// A run's result is applied only while its number is still the latest
    /// and the download is downloading (checked and applied under this
    /// lock), so a stopped run (paused, cancelled, or followed by the next
    /// run) changes nothing. ``pause()``, ``resume()``, ``cancel()`` and
    /// the start of a run check and change the state under it too.
    private let status = Locked<Status>((.queued, 0, 0, 0))
    private typealias Status = (state: State, bytes: Int, total: Int, run: Int)
    private let observers = Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>([:])
    /// The task of the latest run started, with its number.
    private let task = Locked<(run: Int, task: Task<Void, Never>?)>((0, nil))
    /// Where a test holds its runs (none by default).
    let hooks: DownloadRunHooks
    private let onChange: @Sendable () -> Void

    init(loader: ResourceLoader, hooks: DownloadRunHooks = DownloadRunHooks(), onChange: @escaping @Sendable () -> Void)
    {
        self.hooks = hooks
        self.url = loader.url
        self.cacheKey = loader.cacheKey
        self.holder = OfflineDownloader.holder(ofKey: loader.cacheKey)
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
        continuation.onTermination = { [weak self] _ in _ = self?.observers.withLock { $0.removeValue(forKey: id) } }
        // Read, told and registered under the observers' lock, as every
        // update is told (`publish()`): a change either came before (and is
        // read here) or is told after, so none is lost (reading outside it
        // lost a completion landing in between, and `completion()` then
        // waited forever) and none is told after a later one.
        let current = observers.withLock { observers -> DownloadProgress in
            let current = snapshot
            continuation.yield(current)
            if !endsUpdates(current.state) { observers[id] = continuation }
            return current
        }
        if endsUpdates(current.state) { continuation.finish() }
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
    ///
    /// Queued or downloading: becomes ``State/paused``, and its run (if
    /// one started) is stopped; a result that run still brings, even every
    /// byte, is ignored. Paused, completed, failed or cancelled: does nothing.
    public func pause() {
        guard let paused = transition(to: .paused, from: { $0 == .queued || $0 == .downloading }) else { return }
        hooks.transition.current?()
        stopTask(upTo: paused.run)
        publish()
        onChange()
    }

    /// Queues a paused or failed download again; its next run fetches the
    /// missing chunks only.
    ///
    /// Paused or failed: becomes ``State/queued`` (downloading once the
    /// downloader has a free slot). Queued, downloading, completed or
    /// cancelled: does nothing (so two resumes start one run, and a
    /// cancelled download is never started again).
    public func resume() {
        let queued = transition(to: .queued) {
            if case .failed = $0 { return true }
            return $0 == .paused
        }
        guard queued != nil else { return }
        hooks.transition.current?()
        publish()
        onChange()
    }

    /// Stops for good; fetched bytes stay cached, not held by the download
    /// (so evictable, unless someone else holds the entry: the app, a
    /// queue's download).
    ///
    /// Queued, downloading, paused or failed: becomes ``State/cancelled``,
    /// and its run (if one started) is stopped; it stays cancelled
    /// (``resume()`` and ``pause()`` do nothing then). Completed or
    /// cancelled: does nothing.
    public func cancel() {
        guard let cancelled = transition(to: .cancelled, from: { !isFinal($0) }) else { return }
        hooks.transition.current?()
        stopTask(upTo: cancelled.run)
        publish()
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
                let gate = self.hooks.result.current
                await gate?()
                applied = try await self.complete(run, version: version)
            } catch {
                let failure = StreamingError.wrap(error)
                let gate = self.hooks.result.current
                await gate?()
                guard failure != .cancelled else { return }
                applied = self.update(run: run, state: .failed(failure), onlyFrom: .downloading)
            }
            if applied { self.onChange() }
        }
        task.withLock { slot in
            // A later run may have been stored first: this one is over.
            guard slot.run < run else { return running.cancel() }
            // An earlier run is over (it was stopped before this one began).
            slot.task?.cancel()
            slot = (run, running)
        }
        // Paused (or cancelled) before its task was stored: stopped then.
        let current = status.current
        if current.run != run || current.state != .downloading { running.cancel() }
    }

    /// The number of the latest run started (the first is 1); test support.
    package var latestRun: Int { status.current.run }

    /// The task of the latest run, if not stopped; test support.
    package var latestRunTask: Task<Void, Never>? { task.current.task }

    /// Marks a queued download downloading, as run number one more than
    /// the last; `nil` when it is not queued (another call started it).
    private func beginRun() -> Int? {
        let begun = status.withLock { status -> Status? in
            guard status.state == .queued else { return nil }
            status.state = .downloading
            status.run += 1
            return status
        }
        guard let begun else { return nil }
        publish()
        return begun.run
    }

    /// Holds the version `run` downloaded (never a replacement of it) by
    /// ``holder`` and marks the download completed, unless it was paused
    /// or cancelled meanwhile or a later run started. Both in one `StoreIO`
    /// write (its writes run one at a time): a run stopped between the
    /// hold and the state change releases the hold it added. Returns
    /// whether it completed.
    private func complete(_ run: Int, version: UInt64) async throws(StoreError) -> Bool {
        let (key, holder) = (cacheKey, holder)
        let completed = try await loader.cache.storeIO.write { [self] store throws(StoreError) -> Bool in
            let current = status.current
            // A later run holds what it downloads; a stopped one holds nothing.
            guard current.run == run, current.state == .downloading else { return false }
            hooks.hold.current?()
            let added = try store.hold(key, by: holder, version: version)
            // Paused or cancelled once every byte was in: neither the write
            // above nor this task noticed. It stays so, and the hold it added
            // goes (a paused one's resume holds again).
            guard apply(run: run, state: .completed, onlyFrom: .downloading) != nil else {
                if added { try store.release(key, by: holder, version: version) }
                return false
            }
            return true
        }
        if completed { publish() }
        return completed
    }

    /// Changes the state to `next` if `allowed` accepts the current one
    /// (checked and changed at once): the new status, or `nil` when refused.
    private func transition(to next: State, from allowed: (State) -> Bool) -> Status? {
        status.withLock { status -> Status? in
            guard allowed(status.state) else { return nil }
            status.state = next
            return status
        }
    }

    /// Cancels the task of run `run` or of an earlier one: never a later
    /// run's (a resume may have started one since `run` was stopped).
    private func stopTask(upTo run: Int) {
        task.withLock { slot in
            guard slot.run <= run else { return }
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

    /// Applies a change of run `run` and tells observers: only while that
    /// run is the latest, and with `onlyFrom`, only when the state is that
    /// one (checked and changed at once). Returns whether the change was made.
    @discardableResult
    private func update(
        run: Int, state: State? = nil, bytes: Int? = nil, total: Int? = nil, onlyFrom required: State? = nil
    ) -> Bool {
        guard apply(run: run, state: state, bytes: bytes, total: total, onlyFrom: required) != nil else {
            return false
        }
        publish()
        return true
    }

    /// The change of ``update(run:state:bytes:total:onlyFrom:)`` without
    /// telling anyone: the new status, or `nil` when refused.
    private func apply(
        run: Int, state: State? = nil, bytes: Int? = nil, total: Int? = nil, onlyFrom required: State? = nil
    ) -> Status? {
        status.withLock { status -> Status? in
            guard status.run == run else { return nil }
            if let required, status.state != required { return nil }
            if let state { status.state = state }
            if let total { status.total = total }
            if let bytes { status.bytes = bytes }
            if status.state == .completed { status.bytes = status.total }
            return status
        }
    }

    /// Tells the observers and `Progress` the status as it is now (not
    /// as the caller's change left it: a later change may have been told
    /// already). Observers are told under their lock, so what they hear
    /// never goes back to an older state (a late call may tell the same
    /// snapshot twice).
    private func publish() {
        let (current, ended) = observers.withLock {
            observers -> (DownloadProgress, [AsyncStream<DownloadProgress>.Continuation]) in
            let current = snapshot
            for continuation in observers.values { continuation.yield(current) }
            guard endsUpdates(current.state) else { return (current, []) }
            defer { observers = [:] }
            return (current, Array(observers.values))
        }
        // Outside the lock: a stream's termination handler takes it.
        for continuation in ended { continuation.finish() }
        progress.totalUnitCount = Int64(current.total)
        progress.completedUnitCount = Int64(current.bytes)
    }
}
