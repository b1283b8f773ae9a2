import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// The download engine: one download's state and its runs, for every
/// front-end (a ``MediaDownload`` of an ``OfflineDownloader`` or an
/// `HLSDownloader`, a ``DownloadQueue`` record) and every kind (its
/// ``DownloadPerformer``).
///
/// - **State.** The download's ``DownloadRecord`` (its ``DownloadStatus``
///   changed only through ``DownloadLifecycle``) and its
///   ``DownloadProgress`` counts, under one lock: a change checks the
///   state and makes itself in one step.
/// - **Runs.** Each ``start(performer:cache:ended:)`` of a queued download
///   begins a run numbered one more than the last. A run's progress and
///   result count only while it is the latest and the download is
///   downloading: a stopped run's late report or result is ignored.
/// - **Holds.** A run that succeeds holds the entries its performer
///   returns by ``holder``, those exact versions, in the same store write
///   that marks it completed; a hold that fails midway, or a run stopped
///   meanwhile, leaves none of the holds it added.
package final class DownloadRunner: Sendable {
    private struct State {
        var record: DownloadRecord
        /// The counts (their `state` is the record's status, told on reading).
        var progress: DownloadProgress
        /// The number of the latest run started (0: none).
        var run: Int

        /// The record with the counts' bytes.
        var current: DownloadRecord {
            var record = record
            record.bytesStored = progress.bytes
            record.totalBytes = progress.total > 0 ? progress.total : nil
            return record
        }

        var snapshot: DownloadProgress {
            var progress = progress
            progress.state = MediaDownload.State(record.status)
            return progress
        }

        func isLive(_ run: Int) -> Bool { self.run == run && record.status == .downloading }
    }

    /// The store holder of what the download keeps.
    package let holder: String
    /// Where a test holds its runs (none by default).
    package let hooks: DownloadRunHooks
    private let state: Locked<State>
    /// The task of the latest run started, with its number (`nil` once
    /// stopped), and a task that ends once every run started so far ended
    /// (what a run started with `afterPrevious` waits for).
    private let task = Locked<(run: Int, task: Task<Void, Never>?, last: Task<Void, Never>?)>((0, nil, nil))
    /// What the performer told besides its progress (an HLS plan).
    private let details = Locked<(any Sendable)?>(nil)
    /// Told after each change of the state or the counts (outside the
    /// lock); it reads what it tells (``snapshot``, ``record``) as it is then.
    private let changed: @Sendable (DownloadRunner) -> Void
    /// Told after a run kept (or dropped) resume data in the record.
    private let resumeKept: @Sendable (DownloadRunner) -> Void

    /// - parameters:
    ///   - record: the download, in any status (a queue's restored one too).
    ///   - holder: the store holder of what it keeps.
    ///   - hooks: where a test holds its runs.
    ///   - changed: told after each change of the state or the counts.
    ///   - resumeKept: told after a run kept (or dropped) resume data in the record.
    package init(
        record: DownloadRecord, holder: String, hooks: DownloadRunHooks = DownloadRunHooks(),
        changed: @escaping @Sendable (DownloadRunner) -> Void = { _ in },
        resumeKept: @escaping @Sendable (DownloadRunner) -> Void = { _ in }
    ) {
        var progress = DownloadProgress(state: MediaDownload.State(record.status))
        progress.bytes = record.bytesStored
        progress.total = record.totalBytes ?? 0
        self.state = Locked(State(record: record, progress: progress, run: 0))
        self.holder = holder
        self.hooks = hooks
        self.resumeKept = resumeKept
        self.changed = changed
    }

    /// The record now, with its status and bytes.
    package var record: DownloadRecord { state.withLock { $0.current } }

    /// The status now.
    package var status: DownloadStatus { state.withLock { $0.record.status } }

    /// The progress now.
    package var snapshot: DownloadProgress { state.withLock { $0.snapshot } }

    /// Whether the download's entries are held (see ``DownloadRecord/holdsBytes``).
    package var holdsBytes: Bool { state.withLock { $0.record.holdsBytes } }

    /// The number of the latest run started (the first is 1).
    package var latestRun: Int { state.withLock { $0.run } }

    /// The task of the latest run, if not stopped.
    package var latestRunTask: Task<Void, Never>? { task.current.task }

    /// What the performer told besides progress (an HLS plan), if anything.
    package var detail: (any Sendable)? { details.current }

    /// Applies `event` through ``DownloadLifecycle`` if `allowed` accepts
    /// the status (checked and changed at once); a run stops once the
    /// download is no longer downloading (never a later run than the one
    /// current at the change).
    ///
    /// - returns: whether it was applied (`false`: `allowed` refused).
    /// - throws: ``DownloadError/transition(status:event:)`` when the status does not take `event`.
    @discardableResult
    package func apply(_ event: DownloadEvent, when allowed: (DownloadStatus) -> Bool = { _ in true })
        throws(DownloadError) -> Bool
    {
        let applied = state.withLock { state -> Result<(status: DownloadStatus, run: Int)?, DownloadError> in
            guard allowed(state.record.status) else { return .success(nil) }
            do throws(DownloadError) {
                try state.record.apply(event)
            } catch {
                return .failure(error)
            }
            return .success((state.record.status, state.run))
        }
        guard let changed = try applied.get() else { return false }
        hooks.transition.current?()
        if changed.status != .downloading { stopTask(upTo: changed.run) }
        tell()
        return true
    }

    /// Changes the record's fields other than its status (the order, the
    /// conditions, attempts, bytes stored).
    package func edit(_ body: (inout DownloadRecord) -> Void) {
        state.withLock { state in
            var record = state.current
            body(&record)
            record.status = state.record.status
            state.record = record
            state.progress.bytes = record.bytesStored
            state.progress.total = record.totalBytes ?? 0
        }
        tell()
    }

    /// Starts a run of `performer` if queued: downloading, as run number
    /// one more than the last (fetching in `background` when given: see
    /// ``DownloadContext/background``). `ended` is awaited with the run's number once
    /// the run changed the state (completed or failed); never for a stopped run.
    ///
    /// With `afterPrevious`, the performer is called once the run before
    /// it ended (or this one is stopped meanwhile): the runs do not
    /// overlap. Runs through ``BackgroundTransfer`` tasks need it: a
    /// stopped run's last steps (cancelling the tasks it started, the
    /// import it was in) come before the next run looks at the store and
    /// at the tasks the service runs, which have the names of the stopped
    /// run's. Otherwise a stopped run's end is not waited for (its fetches
    /// are cancelled; what it still writes is of no run).
    ///
    /// - returns: whether a run started.
    @discardableResult
    package func start(
        performer: any DownloadPerformer, cache: StreamingCache, background: BackgroundFetch? = nil,
        afterPrevious: Bool = false, ended: @escaping @Sendable (_ run: Int) async -> Void
    ) -> Bool {
        let begun = state.withLock { state -> (run: Int, record: DownloadRecord)? in
            guard (try? state.record.apply(.start)) != nil else { return nil }
            state.run += 1
            return (state.run, state.current)
        }
        guard let (run, record) = begun else { return false }
        let previous = afterPrevious ? task.withLock { $0.last } : nil
        tell()
        let context = DownloadContext(
            cache: cache, holder: holder, isLive: isLive(run),
            report: { [weak self] change in self?.update(run: run, change) },
            detail: { [weak self] detail in self?.details.withLock { $0 = detail } },
            keepResumeData: { [weak self] data in
                guard let self else { return }
                self.edit { $0.resumeData = data }
                self.resumeKept(self)
            }, background: background)
        let running = Task { [weak self] in
            var record = record
            if let previous {
                await Self.end(of: previous)
                // Stopped while it waited: nothing ran. Else the record as
                // the runs before left it (the resume data they kept).
                guard !Task.isCancelled, let current = self?.state.withLock({ $0.isLive(run) ? $0.current : nil })
                else { return }
                record = current
            }
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
                    applied = try await self.complete(run, entries: entries, in: cache)
                } catch {
                    applied = self.fail(run, .store(error))
                }
            case .failure(let failure):
                // A stopped run's cancellation changes nothing (`fail` checks); a
                // live run's ends the download, which never stays downloading with no run.
                applied = self.fail(run, failure)
            }
            if applied { await ended(run) }
        }
        task.withLock { slot in
            // A later run may have been stored first: this one is over.
            guard slot.run < run else { return running.cancel() }
            // An earlier run is over (it was stopped before this one began).
            slot.task?.cancel()
            // A run stopped while it waits ends at once: the next one waits
            // for the runs before it too.
            let earlier = slot.last
            slot = (
                run, running,
                afterPrevious
                    ? Task {
                        await earlier?.value; await running.value
                    } : running
            )
        }
        // Stopped before its task was stored: stopped then.
        if !state.withLock({ $0.isLive(run) }) { running.cancel() }
        return true
    }

    /// Waits for `task` to end, or for the calling task to be cancelled.
    private static func end(of task: Task<Void, Never>) async {
        let waiter = Locked<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                waiter.withLock { $0 = continuation }
                Task {
                    await task.value
                    waiter.withLock { $0.take() }?.resume()
                }
                if Task.isCancelled { waiter.withLock { $0.take() }?.resume() }
            }
        } onCancel: {
            waiter.withLock { $0.take() }?.resume()
        }
    }

    /// Stops the latest run (its owner is going away).
    package func stopRuns() { stopTask(upTo: .max) }

    /// Whether run `run` is still the latest and the download downloading
    /// (a stopped run's progress, result and holds count no more).
    package func isLive(run: Int) -> Bool { state.withLock { $0.isLive(run) } }

    /// Whether run `run` is still the latest and downloading (a stopped one holds nothing more).
    private func isLive(_ run: Int) -> @Sendable () -> Bool {
        { [state] in state.withLock { $0.isLive(run) } }
    }

    /// Holds `entries` (the versions `run` downloaded, never a replacement)
    /// by ``holder`` and marks the download completed, unless it was
    /// stopped meanwhile or a later run started. Both in one `StoreIO`
    /// write (its writes run one at a time). The holds are one store
    /// transaction (one commit for them all): a hold that fails leaves
    /// none; a run stopped between the holds and the state change
    /// releases the holds it added. Returns whether it completed.
    private func complete(_ run: Int, entries: [StoredEntry], in cache: StreamingCache) async throws(StoreError)
        -> Bool
    {
        let holder = holder
        let completed = try await cache.storeIO.write { [self] store throws(StoreError) -> Bool in
            guard state.withLock({ $0.isLive(run) }) else { return false }
            hooks.hold.current?()
            var added: [StoredEntry] = []
            try Self.batch(in: store) { batch in
                added = []
                for entry in entries where try batch.hold(entry.key, by: holder, version: entry.version) {
                    added.append(entry)
                }
            }
            let done = state.withLock { state -> Bool in
                guard state.isLive(run), (try? state.record.apply(.finish)) != nil else { return false }
                if state.progress.total > 0 { state.progress.bytes = state.progress.total }
                return true
            }
            // Stopped once every byte was in: it stays so, and the holds
            // added go (a resumed one's next run holds again).
            if !done { try Self.release(added, by: holder, in: store) }
            return done
        }
        if completed { tell() }
        return completed
    }

    private static func release(_ entries: [StoredEntry], by holder: String, in store: MediaStore) throws(StoreError) {
        try batch(in: store) { batch in
            for entry in entries { try batch.release(entry.key, by: holder, version: entry.version) }
        }
    }

    /// `store.performBatch(body)`, for a body that throws only what the batch throws.
    private static func batch(in store: MediaStore, _ body: (WriteBatch) throws -> Void) throws(StoreError) {
        do {
            try store.performBatch(body)
        } catch let error as StoreError {
            throw error
        } catch {
            // The batch's calls throw only store failures (performBatch maps them all).
            throw .storage(code: -1, message: String(describing: error))
        }
    }

    /// Marks run `run` failed with `failure` if it is the latest and downloading.
    private func fail(_ run: Int, _ failure: DownloadError) -> Bool {
        let failed = state.withLock { state -> Bool in
            guard state.isLive(run), (try? state.record.apply(.fail(failure))) != nil else { return false }
            return true
        }
        if failed { tell() }
        return failed
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

    /// Applies a change of run `run`'s counts, only while that run is the
    /// latest and downloading; the state is never changed by it.
    private func update(run: Int, _ change: (inout DownloadProgress) -> Void) {
        let changed = state.withLock { state -> Bool in
            guard state.isLive(run) else { return false }
            let kept = state.progress.state
            change(&state.progress)
            state.progress.state = kept
            return true
        }
        if changed { tell() }
    }

    private func tell() { changed(self) }
}

extension MediaDownload.State {
    /// A ``MediaDownload``'s state for the engine's `status`: stopped is
    /// paused, and removing (dropped by its front-end, its bytes cached) is cancelled.
    init(_ status: DownloadStatus) {
        switch status {
        case .queued, .waiting: self = .queued
        case .downloading: self = .downloading
        case .stopped: self = .paused
        case .completed: self = .completed
        case .failed(let failure): self = .failed(failure)
        case .removing: self = .cancelled
        }
    }
}
