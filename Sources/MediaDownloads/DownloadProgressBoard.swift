import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// Keeps a ``DownloadQueue``'s aggregate progress: a `Foundation.Progress`
/// per batch and an async sequence of ``AggregateDownloadProgress``.
///
/// A batch starts when a download becomes active while none was, and
/// holds every download active since; the next batch forgets the ones
/// that ended. Updated from the performers' progress callbacks (any
/// thread) and from the queue.
final class DownloadProgressBoard: Sendable {
    enum Standing: Sendable { case active, completed, failed, cancelled, stopped }

    private struct Member {
        var bytes: Int
        var total: Int?
        var standing: Standing
    }

    private struct State {
        var members: [UUID: Member] = [:]
        var progress = Progress(totalUnitCount: 1)
        /// (time, bytes gained so far) for the throughput.
        var samples: [(time: ContinuousClock.Instant, gained: Int64)] = []
        var gained: Int64 = 0
        var observers: [UUID: AsyncStream<AggregateDownloadProgress>.Continuation] = [:]
        /// Changes made, to apply them to `progress` in order.
        var sequence: UInt64 = 0
        /// Whether ``cancelBatch()`` cancelled this batch.
        var cancelled = false
    }

    private let state = Locked(State())
    /// Sets the batch's `Progress` in the order of the changes, outside
    /// any lock (`Progress` notifies its observers synchronously, and an
    /// observer may pause or cancel a download, which changes the board).
    private let setter = OrderedApplier<(AggregateDownloadProgress, Progress)> { snapshot, progress in
        DownloadProgressBoard.apply(snapshot, to: progress)
    }
    /// How far back the throughput looks.
    private let window: Duration = .seconds(3)

    /// The current batch's progress.
    var progress: Progress { state.withLock { $0.progress } }

    var snapshot: AggregateDownloadProgress { state.withLock { Self.snapshot(of: $0) } }

    /// The snapshot now, then every change, until the stream is dropped.
    func updates() -> AsyncStream<AggregateDownloadProgress> {
        let (stream, continuation) = AsyncStream<AggregateDownloadProgress>.makeStream(
            bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        state.withLock { state in
            state.observers[id] = continuation
            continuation.yield(Self.snapshot(of: state))
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// `id` is active (queued, waiting or downloading) with `bytes` of `total` stored.
    func activate(_ id: UUID, bytes: Int, total: Int?) {
        change { state in
            if !state.members.values.contains(where: { $0.standing == .active }) {
                // A new batch.
                state.members = [:]
                state.progress = Progress(totalUnitCount: 1)
                state.samples = []
                state.gained = 0
                state.cancelled = false
            }
            state.members[id] = Member(bytes: bytes, total: total, standing: .active)
        }
    }

    /// Bytes stored of an active download.
    func update(_ id: UUID, bytes: Int, total: Int?) {
        change { state in
            guard var member = state.members[id], member.standing == .active else { return }
            if bytes > member.bytes { state.gained += Int64(bytes - member.bytes) }
            member.bytes = bytes
            member.total = total ?? member.total
            state.members[id] = member
        }
    }

    /// `id` ended as `standing` (a member of the batch or not).
    func end(_ id: UUID, as standing: Standing, bytes: Int? = nil) {
        change { state in
            guard var member = state.members[id] else { return }
            member.standing = standing
            if standing == .completed { member.bytes = member.total ?? bytes ?? member.bytes }
            if let bytes, standing != .completed { member.bytes = bytes }
            state.members[id] = member
        }
    }

    /// Everything was cancelled: the batch's `Progress` says so.
    func cancelBatch() {
        var progress: Progress?
        change { state in
            state.cancelled = true
            progress = state.progress
        }
        progress?.cancel()
    }

    /// Forgets `id` (removed).
    func forget(_ id: UUID) {
        change { $0.members[id] = nil }
    }

    private func change(_ body: (inout State) -> Void) {
        let (snapshot, progress, sequence) = state.withLock {
            state -> (AggregateDownloadProgress, Progress, UInt64) in
            body(&state)
            let now = ContinuousClock.now
            state.samples.append((now, state.gained))
            state.samples.removeAll { now - $0.time > window }
            let snapshot = Self.snapshot(of: state)
            // Under the lock, so observers see the snapshots in order.
            for observer in state.observers.values { observer.yield(snapshot) }
            state.sequence += 1
            return (snapshot, state.progress, state.sequence)
        }
        setter.offer((snapshot, progress), number: sequence)
    }

    /// Sets `progress` to `snapshot`. Foundation on Linux traps when a
    /// total goes back to 0: an empty batch is 1 unit, done when nothing
    /// is active.
    private static func apply(_ snapshot: AggregateDownloadProgress, to progress: Progress) {
        let bytes = Int64(snapshot.progress.bytes)
        let total = max(1, Int64(snapshot.progress.total))
        let completed = snapshot.progress.total > 0 ? bytes : (snapshot.active == 0 ? 1 : 0)
        if total < progress.completedUnitCount { progress.completedUnitCount = min(completed, total) }
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
        progress.setUserInfoObject(snapshot.throughput.map { NSNumber(value: Int($0)) }, forKey: .throughputKey)
        progress.setUserInfoObject(
            snapshot.estimatedTimeRemaining.map { NSNumber(value: $0) }, forKey: .estimatedTimeRemainingKey)
    }

    private static func snapshot(of state: State) -> AggregateDownloadProgress {
        var result = AggregateDownloadProgress()
        for member in state.members.values {
            switch member.standing {
            case .active: result.active += 1
            case .completed: result.completed += 1
            case .failed: result.failed += 1
            case .cancelled: result.cancelled += 1
            case .stopped: result.stopped += 1
            }
            guard member.standing != .failed, member.standing != .cancelled else { continue }
            result.progress.bytes += member.bytes
            result.progress.total += max(member.total ?? 0, member.bytes)
        }
        result.progress.state = result.active > 0 ? .downloading : state.cancelled ? .cancelled : .completed
        if let first = state.samples.first, let last = state.samples.last, last.time > first.time {
            let elapsed = last.time - first.time
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds >= 0.2 {
                let rate = Double(last.gained - first.gained) / seconds
                result.throughput = rate
                let left = result.progress.total - result.progress.bytes
                if rate > 0, result.active > 0 { result.estimatedTimeRemaining = Double(left) / rate }
            }
        }
        return result
    }
}
