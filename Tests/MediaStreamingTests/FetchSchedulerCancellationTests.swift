import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaStreaming

/// A task cancelled before (or while) it starts to wait in the scheduler
/// returns at once with ``FetchSchedulerError/cancelled`` and takes no
/// connection.
@Suite("Fetch scheduler cancellation", .timeLimit(.minutes(1)))
struct FetchSchedulerCancellationTests {
    /// The outcome of `task`, or `nil` if it is still running after 2 s
    /// (`unblock` then lets it end, so the test never hangs).
    func outcome<T: Sendable>(
        of task: Task<T, any Error>, unblock: () -> Void
    ) async -> Result<T, FetchSchedulerError>? {
        let done = Locked<Result<T, FetchSchedulerError>?>(nil)
        let watcher = Task {
            let result: Result<T, FetchSchedulerError>
            do { result = .success(try await task.value) } catch { result = .failure(error as! FetchSchedulerError) }
            done.withLock { $0 = result }
        }
        for _ in 0..<200 where done.current == nil { try? await Task.sleep(for: .milliseconds(10)) }
        let early = done.current
        if early == nil { unblock() }
        await watcher.value
        return early
    }

    static func cancelCurrentTask() { withUnsafeCurrentTask { $0?.cancel() } }

    /// A scheduler whose waiting tasks cancel themselves just before they
    /// may wait, once `armed` is set.
    static func selfCancelling(connectionsPerHost: Int = 4, armed: Locked<Bool>) -> FetchScheduler {
        FetchScheduler(connectionsPerHost: connectionsPerHost) { if armed.current { cancelCurrentTask() } }
    }

    @Test func aCancelledTaskIsNotAdmittedToAFreeHost() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 1)
        let admitting = Task {
            Self.cancelCurrentTask()
            return try await scheduler.admit(.download, host: "a")
        }
        let result = await outcome(of: admitting) {}
        #expect(result.map { "\($0)" } == "\(Result<FetchTicket, FetchSchedulerError>.failure(.cancelled))")
        #expect(scheduler.snapshot == FetchScheduler.Snapshot(), "\(scheduler.snapshot)")
    }

    @Test func aCancelWhileEnqueuingDoesNotWaitForAFullHost() async throws {
        let armed = Locked(false)
        let scheduler = Self.selfCancelling(connectionsPerHost: 1, armed: armed)
        let holder = try await scheduler.admit(.preload, host: "a")
        // Cancelled after its cancellation handler is installed and before it enqueues.
        armed.withLock { $0 = true }
        let admitting = Task { try await scheduler.admit(.download, host: "a") }
        let result = await outcome(of: admitting) { scheduler.finish(holder) }
        #expect(result.map { "\($0)" } == "\(Result<FetchTicket, FetchSchedulerError>.failure(.cancelled))")
        #expect(scheduler.snapshot.waitingForConnection.isEmpty)
        #expect(scheduler.snapshot.busy[.download] == nil, "a cancelled waiter took the connection")
    }

    @Test func aCancelledTaskDoesNotPauseAtACheckpoint() async throws {
        let scheduler = FetchScheduler()
        let download = try await scheduler.admit(.download, host: "a")
        let playback = try await scheduler.admit(.playback, host: "a")
        let pausing = Task {
            Self.cancelCurrentTask()
            try await scheduler.checkpoint(download)
        }
        let result = await outcome(of: pausing) { scheduler.finish(playback) }
        #expect(result.map { "\($0)" } == "\(Result<Void, FetchSchedulerError>.failure(.cancelled))")
        #expect(scheduler.snapshot.paused.isEmpty)
    }

    @Test func aCancelWhilePausingDoesNotWaitAtACheckpoint() async throws {
        let armed = Locked(false)
        let scheduler = Self.selfCancelling(armed: armed)
        let download = try await scheduler.admit(.download, host: "a")
        let playback = try await scheduler.admit(.playback, host: "a")
        armed.withLock { $0 = true }
        let pausing = Task { try await scheduler.checkpoint(download) }
        let result = await outcome(of: pausing) { scheduler.finish(playback) }
        #expect(result.map { "\($0)" } == "\(Result<Void, FetchSchedulerError>.failure(.cancelled))")
        #expect(scheduler.snapshot.paused.isEmpty)
    }
}
