import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// One download of a file or an HLS asset for offline use (the role of
/// `AVAssetDownloadTask`), made by an ``OfflineDownloader`` or an
/// `HLSDownloader`: progress as a `Foundation.Progress` and as an async
/// sequence of ``DownloadProgress``; pause, resume, cancel. It is the
/// in-memory handle of a download of the engine a ``DownloadQueue`` runs
/// its records on too (the same states, runs and holds; nothing persisted).
///
/// Its bytes are moved by a ``DownloadPerformer``, in runs: each start or
/// resume begins a run numbered one more than the last. A run's progress
/// and result count only while it is the latest and the download is
/// downloading, so a stopped run's late result is ignored. A run that
/// succeeds holds the entries its performer returns by ``holder``, those
/// exact versions, in the same store write that marks it completed.
///
/// ``pause()``, ``resume()`` and ``cancel()`` may be called from any
/// thread, at once: each checks the state and changes it in one step, so
/// two calls never interleave (one acts on the other's outcome). In short,
/// a cancelled download stays cancelled.
public final class MediaDownload: Sendable {
    /// Where a download stands.
    public enum State: Sendable, Equatable {
        /// Waiting to start (for a free slot of its downloader).
        case queued
        /// Fetching.
        case downloading
        /// Paused; ``MediaDownload/resume()`` continues with what is missing.
        case paused
        /// Every byte is in the store, held by ``MediaDownload/holder``.
        case completed
        /// Failed; ``MediaDownload/resume()`` retries (live and FairPlay
        /// HLS assets fail at once, with nothing stored).
        case failed(DownloadError)
        /// Cancelled; what was fetched stays cached. A progressive file's
        /// entry is not held by the download; the resources an HLS asset's
        /// run held stay held until its downloader releases the asset.
        case cancelled
    }

    /// The URL downloaded (an HLS asset's master playlist).
    public let url: URL
    /// The store key of its entry (an HLS asset's: its master playlist's,
    /// which the asset's entries are grouped under).
    public let key: String
    /// Progress in bytes, or in resources once an HLS plan is known.
    public let progress: Progress
    let performer: any DownloadPerformer
    let cache: StreamingCache
    /// Its state and runs: the engine every front-end drives.
    private let runner: DownloadRunner
    private let observers: Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>
    /// Told after each change that may start or free a run (a resume, a
    /// pause, a cancel, an end): the owner's scheduling.
    private let onChange: @Sendable () -> Void

    /// A queued download of `record` by `performer` into `cache`, holding by `holder`.
    package init(
        record: DownloadRecord, key: String, holder: String, performer: any DownloadPerformer, cache: StreamingCache,
        hooks: DownloadRunHooks = DownloadRunHooks(), onChange: @escaping @Sendable () -> Void
    ) {
        self.url = record.url
        self.key = key
        self.performer = performer
        self.cache = cache
        self.onChange = onChange
        let (progress, observers) = (
            Progress(totalUnitCount: 0), Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>([:])
        )
        // Sets `progress` in the order the snapshots were read, outside
        // any lock: `Progress` notifies its observers synchronously, and an
        // observer may change this download again.
        let told = Locked<UInt64>(0)
        let setter = OrderedApplier<DownloadProgress> { current in
            let inResources = current.totalResources > 0
            progress.totalUnitCount = Int64(inResources ? current.totalResources : current.total)
            progress.completedUnitCount = Int64(inResources ? current.resources : current.bytes)
        }
        self.progress = progress
        self.observers = observers
        self.runner = DownloadRunner(record: record, holder: holder, hooks: hooks) { runner in
            Self.publish(runner, to: observers, told: told, setter: setter)
        }
    }

    /// The store holder that holds what it keeps.
    public var holder: String { runner.holder }

    /// What it downloads (url, cache key, headers, priority).
    var record: DownloadRecord { runner.record }

    /// Where a test holds its runs (none by default).
    package var hooks: DownloadRunHooks { runner.hooks }

    /// The current state.
    public var state: State { runner.snapshot.state }

    /// The current snapshot.
    public var snapshot: DownloadProgress { runner.snapshot }

    /// What the performer told besides progress (an HLS plan), if anything.
    package var detail: (any Sendable)? { runner.detail }

    /// Snapshots from now on (the current one first), until the download
    /// completes, fails or is cancelled.
    public func progressUpdates() -> AsyncStream<DownloadProgress> {
        let (stream, continuation) = AsyncStream<DownloadProgress>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        continuation.onTermination = { [weak self] _ in _ = self?.observers.withLock { $0.removeValue(forKey: id) } }
        // Read, told and registered under the observers' lock, as every
        // update is told (`publish()`): none is lost, none told after a later one.
        let current = observers.withLock { observers -> DownloadProgress in
            let current = snapshot
            continuation.yield(current)
            if !Self.endsUpdates(current.state) { observers[id] = continuation }
            return current
        }
        if Self.endsUpdates(current.state) { continuation.finish() }
        return stream
    }

    /// Waits until the download completes (returns) or fails or is
    /// cancelled (throws; ``DownloadError/cancelled`` when cancelled).
    public func completion() async throws(DownloadError) {
        for await update in progressUpdates() {
            switch update.state {
            case .completed: return
            case .failed(let error): throw error
            case .cancelled: throw .cancelled
            default: continue
            }
        }
        switch state {
        case .failed(let error): throw error
        case .cancelled: throw .cancelled
        default: return
        }
    }

    /// Stops fetching; ``resume()`` continues with what is missing only.
    ///
    /// Queued or downloading: becomes ``State/paused``, and its run (if one
    /// started) is stopped; a result that run still brings, even every
    /// byte, is ignored. Paused, completed, failed or cancelled: does nothing.
    public func pause() {
        guard change(.stop(.user), when: { $0 == .queued || $0 == .downloading }) else { return }
        onChange()
    }

    /// Queues a paused or failed download again; its next run fetches what
    /// is missing only.
    ///
    /// Paused or failed: becomes ``State/queued`` (downloading once its
    /// downloader starts it). Queued, downloading, completed or cancelled:
    /// does nothing (so two resumes start one run, and a cancelled
    /// download is never started again).
    public func resume() {
        let resumable: (DownloadStatus) -> Bool = {
            if case .failed = $0 { return true }
            if case .stopped = $0 { return true }
            return false
        }
        guard change(.resume, when: resumable) else { return }
        onChange()
    }

    /// Stops for good; fetched bytes stay cached.
    ///
    /// Queued, downloading, paused or failed: becomes ``State/cancelled``,
    /// and its run (if one started) is stopped; it stays cancelled
    /// (``resume()`` and ``pause()`` do nothing then). Completed or
    /// cancelled: does nothing.
    public func cancel() {
        // Cancelled is the engine's removing: dropped by its front-end, the bytes cached.
        guard change(.remove, when: { $0 != .completed && $0 != .removing }) else { return }
        onChange()
    }

    /// Starts a run if queued (its owner calls this when a slot is free).
    package func start() {
        runner.start(performer: performer, cache: cache) { [onChange] _ in onChange() }
    }

    /// Applies `event` if `allowed` takes the status: whether it did (the
    /// table takes every event these calls allow).
    private func change(_ event: DownloadEvent, when allowed: (DownloadStatus) -> Bool) -> Bool {
        do throws(DownloadError) {
            return try runner.apply(event, when: allowed)
        } catch {
            return false
        }
    }

    /// The number of the latest run started (the first is 1); test support.
    package var latestRun: Int { runner.latestRun }

    /// The task of the latest run, if not stopped; test support.
    package var latestRunTask: Task<Void, Never>? { runner.latestRunTask }

    private static func isFinal(_ state: State) -> Bool {
        switch state {
        case .completed, .cancelled: true
        default: false
        }
    }

    /// Whether a stream of updates ends with `state` (a failed download
    /// can be resumed, but its streams end: ask for new ones).
    private static func endsUpdates(_ state: State) -> Bool {
        if case .failed = state { return true }
        return isFinal(state)
    }

    /// Tells the observers and `Progress` the status as it is now (not as
    /// the caller's change left it: a later change may have been told
    /// already). Observers are told under their lock, so what they hear
    /// never goes back to an older state (a late call may tell the same
    /// snapshot twice).
    private static func publish(
        _ runner: DownloadRunner, to observers: Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>,
        told: Locked<UInt64>, setter: OrderedApplier<DownloadProgress>
    ) {
        let (current, number, ended) = observers.withLock {
            observers -> (DownloadProgress, UInt64, [AsyncStream<DownloadProgress>.Continuation]) in
            let current = runner.snapshot
            let number = told.withLock {
                $0 += 1
                return $0
            }
            for continuation in observers.values { continuation.yield(current) }
            guard Self.endsUpdates(current.state) else { return (current, number, []) }
            defer { observers = [:] }
            return (current, number, Array(observers.values))
        }
        // Outside the lock: a stream's termination handler takes it.
        for continuation in ended { continuation.finish() }
        runner.hooks.publish.current?(current)
        // In the order the snapshots were read: an older one told late is
        // dropped.
        setter.offer(current, number: number)
    }
}
