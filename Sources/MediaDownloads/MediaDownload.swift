import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// One download of a file or an HLS asset for offline use (the role of
/// `AVAssetDownloadTask`), made by an ``OfflineDownloader`` or an
/// `HLSDownloader`: progress as a `Foundation.Progress` and as an async
/// sequence of ``DownloadProgress``; pause, resume, cancel.
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
    /// The store holder that holds what it keeps.
    public let holder: String
    /// Progress in bytes, or in resources once an HLS plan is known.
    public let progress: Progress
    /// What it downloads (url, cache key, headers, priority).
    let record: DownloadRecord
    let performer: any DownloadPerformer
    let cache: StreamingCache
    /// The progress, with the number of the latest run started. A run's
    /// changes are applied only while its number is the latest (checked
    /// and applied under this lock); its result only while downloading.
    private let status: Locked<(progress: DownloadProgress, run: Int)>
    private let observers = Locked<[UUID: AsyncStream<DownloadProgress>.Continuation]>([:])
    /// The task of the latest run started, with its number.
    private let task = Locked<(run: Int, task: Task<Void, Never>?)>((0, nil))
    /// What the performer told about the download besides its progress
    /// (an HLS plan), for its front-end to read.
    private let details = Locked<(any Sendable)?>(nil)
    /// Where a test holds its runs (none by default).
    package let hooks: DownloadRunHooks
    /// Told after each change that may start or free a run (a resume, a
    /// pause, a cancel, an end): the owner's scheduling.
    private let onChange: @Sendable () -> Void

    /// A queued download of `record` by `performer` into `cache`, holding by `holder`.
    package init(
        record: DownloadRecord, key: String, holder: String, performer: any DownloadPerformer, cache: StreamingCache,
        hooks: DownloadRunHooks = DownloadRunHooks(), onChange: @escaping @Sendable () -> Void
    ) {
        self.record = record
        self.url = record.url
        self.key = key
        self.holder = holder
        self.performer = performer
        self.cache = cache
        self.hooks = hooks
        self.onChange = onChange
        self.progress = Progress(totalUnitCount: 0)
        self.status = Locked((DownloadProgress(state: .queued), 0))
    }

    /// The current state.
    public var state: State { status.current.progress.state }

    /// The current snapshot.
    public var snapshot: DownloadProgress { status.current.progress }

    /// What the performer told besides progress (an HLS plan), if anything.
    package var detail: (any Sendable)? { details.current }

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
        guard let paused = transition(to: .paused, from: { $0 == .queued || $0 == .downloading }) else { return }
        hooks.transition.current?()
        stopTask(upTo: paused.run)
        publish()
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
        let queued = transition(to: .queued) {
            if case .failed = $0 { return true }
            return $0 == .paused
        }
        guard queued != nil else { return }
        hooks.transition.current?()
        publish()
        onChange()
    }

    /// Stops for good; fetched bytes stay cached.
    ///
    /// Queued, downloading, paused or failed: becomes ``State/cancelled``,
    /// and its run (if one started) is stopped; it stays cancelled
    /// (``resume()`` and ``pause()`` do nothing then). Completed or
    /// cancelled: does nothing.
    public func cancel() {
        guard let cancelled = transition(to: .cancelled, from: { !Self.isFinal($0) }) else { return }
        hooks.transition.current?()
        stopTask(upTo: cancelled.run)
        publish()
        onChange()
    }

    /// Starts a run if queued (its owner calls this when a slot is free).
    package func start() {
        guard let run = beginRun() else { return }
        let context = DownloadContext(
            cache: cache, holder: holder, isLive: isLive(run),
            report: { [weak self] change in self?.update(run: run, change) },
            detail: { [weak self] detail in self?.details.withLock { $0 = detail } })
        let (record, performer) = (record, performer)
        let running = Task { [weak self] in
            let result: Result<[StoredEntry], DownloadError>
            do throws(DownloadError) {
                result = .success(try await performer.perform(record, context: context))
            } catch {
                result = .failure(error)
            }
            guard let self else { return }
            let gate = self.hooks.result.current
            await gate?()
            let applied: Bool
            switch result {
            case .success(let entries):
                do throws(StoreError) {
                    applied = try await self.complete(run, entries: entries)
                } catch {
                    applied = self.fail(run, .store(error))
                }
            case .failure(let failure):
                // A stopped run's cancellation changes nothing (`fail` checks); a
                // live run's ends the download, which never stays downloading with no run.
                applied = self.fail(run, failure)
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
        if current.run != run || current.progress.state != .downloading { running.cancel() }
    }

    /// The number of the latest run started (the first is 1); test support.
    package var latestRun: Int { status.current.run }

    /// The task of the latest run, if not stopped; test support.
    package var latestRunTask: Task<Void, Never>? { task.current.task }

    /// Marks a queued download downloading, as run number one more than
    /// the last; `nil` when it is not queued (another call started it).
    private func beginRun() -> Int? {
        let begun = status.withLock { status -> Int? in
            guard status.progress.state == .queued else { return nil }
            status.progress.state = .downloading
            status.run += 1
            return status.run
        }
        guard let begun else { return nil }
        publish()
        return begun
    }

    /// Whether run `run` is still the latest and downloading (a stopped one holds nothing more).
    private func isLive(_ run: Int) -> @Sendable () -> Bool {
        { [status] in
            let current = status.current
            return current.run == run && current.progress.state == .downloading
        }
    }

    /// Holds `entries` (the versions `run` downloaded, never a replacement)
    /// by ``holder`` and marks the download completed, unless it was paused
    /// or cancelled meanwhile or a later run started. Both in one `StoreIO`
    /// write (its writes run one at a time): a run stopped between the
    /// holds and the state change releases the holds it added. Returns
    /// whether it completed.
    private func complete(_ run: Int, entries: [StoredEntry]) async throws(StoreError) -> Bool {
        let holder = holder
        let completed = try await cache.storeIO.write { [self] store throws(StoreError) -> Bool in
            guard isLive(run)() else { return false }
            hooks.hold.current?()
            var added: [StoredEntry] = []
            for entry in entries where try store.hold(entry.key, by: holder, version: entry.version) {
                added.append(entry)
            }
            let done = status.withLock { status -> Bool in
                guard status.run == run, status.progress.state == .downloading else { return false }
                status.progress.state = .completed
                if status.progress.total > 0 { status.progress.bytes = status.progress.total }
                return true
            }
            // Paused or cancelled once every byte was in: it stays so, and
            // the holds added go (a paused one's resume holds again).
            if !done {
                for entry in added { try store.release(entry.key, by: holder, version: entry.version) }
            }
            return done
        }
        if completed { publish() }
        return completed
    }

    /// Marks run `run` failed with `failure` if it is the latest and downloading.
    private func fail(_ run: Int, _ failure: DownloadError) -> Bool {
        let failed = status.withLock { status -> Bool in
            guard status.run == run, status.progress.state == .downloading else { return false }
            status.progress.state = .failed(failure)
            return true
        }
        if failed { publish() }
        return failed
    }

    /// Changes the state to `next` if `allowed` accepts the current one
    /// (checked and changed at once): the new status, or `nil` when refused.
    private func transition(to next: State, from allowed: (State) -> Bool) -> (progress: DownloadProgress, run: Int)? {
        status.withLock { status -> (progress: DownloadProgress, run: Int)? in
            guard allowed(status.progress.state) else { return nil }
            status.progress.state = next
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

    /// Applies a change of run `run`'s counts and tells observers, only
    /// while that run is the latest; the state is never changed by it.
    private func update(run: Int, _ change: (inout DownloadProgress) -> Void) {
        let changed = status.withLock { status -> Bool in
            guard status.run == run else { return false }
            let state = status.progress.state
            change(&status.progress)
            status.progress.state = state
            return true
        }
        if changed { publish() }
    }

    /// Tells the observers and `Progress` the status as it is now (not as
    /// the caller's change left it: a later change may have been told
    /// already). Observers are told under their lock, so what they hear
    /// never goes back to an older state (a late call may tell the same
    /// snapshot twice).
    private func publish() {
        let (current, ended) = observers.withLock {
            observers -> (DownloadProgress, [AsyncStream<DownloadProgress>.Continuation]) in
            let current = snapshot
            for continuation in observers.values { continuation.yield(current) }
            guard Self.endsUpdates(current.state) else { return (current, []) }
            defer { observers = [:] }
            return (current, Array(observers.values))
        }
        // Outside the lock: a stream's termination handler takes it.
        for continuation in ended { continuation.finish() }
        let inResources = current.totalResources > 0
        progress.totalUnitCount = Int64(inResources ? current.totalResources : current.total)
        progress.completedUnitCount = Int64(inResources ? current.resources : current.bytes)
    }
}
