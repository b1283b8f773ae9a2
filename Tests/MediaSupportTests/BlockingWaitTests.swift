import Foundation
import Testing

@testable import MediaSupport

/// The sync-over-async bridge: a plain thread blocks on an async operation
/// until it ends, a deadline passes, or another thread abandons the wait.
@Suite("Blocking wait", .timeLimit(.minutes(1)))
struct BlockingWaitTests {
    struct Failure: Error, Equatable {
        let code: Int
    }

    /// Runs `body` on a thread of its own (never a pool thread, as the bridge's callers do).
    private func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test("The value and the failure of the operation reach the waiting thread")
    func outcomeReachesTheThread() async throws {
        let value = await onThread {
            BlockingWait { () async throws(Failure) -> Int in
                try? await Task.sleep(for: .milliseconds(20))
                return 42
            }.wait()
        }
        #expect(try value?.get() == 42)
        let failure = await onThread {
            BlockingWait { () async throws(Failure) -> Int in throw Failure(code: 7) }.wait(until: .distantFuture)
        }
        guard case .done(.failure(let error)) = failure else {
            Issue.record("expected the failure, got \(failure)")
            return
        }
        #expect(error == Failure(code: 7))
    }

    @Test("A deadline that passes first gives pending; a later wait still gets the outcome")
    func deadlinePasses() async {
        let gate = AsyncStream<Void>.makeStream()
        let wait = BlockingWait { () async throws(Never) -> String in
            for await _ in gate.stream { break }
            return "late"
        }
        let first = await onThread { wait.wait(until: Date() + 0.05) }
        guard case .pending = first else {
            Issue.record("expected pending, got \(first)")
            return
        }
        gate.continuation.yield()
        let second = await onThread { wait.wait(until: Date() + 30) }
        guard case .done(.success(let text)) = second else {
            Issue.record("expected the outcome, got \(second)")
            return
        }
        #expect(text == "late")
    }

    @Test("A deadline already past, however far, gives pending at once")
    func pastDeadlines() async {
        let gate = AsyncStream<Void>.makeStream()
        let wait = BlockingWait { () async throws(Never) -> Int in
            for await _ in gate.stream { break }
            return 1
        }
        for deadline in [Date() - 1, Date(timeIntervalSinceNow: -400 * 86_400), .distantPast] {
            let step = await onThread { wait.wait(until: deadline) }
            guard case .pending = step else {
                Issue.record("expected pending for \(deadline), got \(step)")
                continue
            }
        }
        gate.continuation.finish()
        #expect(await onThread { wait.wait() }.map { $0.get() } == 1)
    }

    @Test("abandon() releases waiting threads at once and cancels the operation, which may go on")
    func abandonReleasesAndCancels() async {
        let gate = AsyncStream<Void>.makeStream()
        let sawCancellation = Locked(false)
        // Deaf to cancellation (it only notes it): it ends when the test opens the
        // gate, and holds no thread meanwhile (a detached wait is not cancelled with it).
        let wait = BlockingWait { () async throws(Never) -> Int in
            let opened = Task.detached { for await _ in gate.stream { return } }
            await withTaskCancellationHandler {
                await opened.value
            } onCancel: {
                sawCancellation.withLock { $0 = true }
            }
            return 1
        }
        let started = ContinuousClock.now
        async let step = onThread { wait.wait(until: .distantFuture) }
        try? await Task.sleep(for: .milliseconds(50))
        wait.abandon()
        let result = await step
        guard case .stopped = result else {
            Issue.record("expected stopped, got \(result)")
            gate.continuation.finish()
            return
        }
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(await onThread { wait.wait() } == nil)
        for _ in 0..<10_000 where !sawCancellation.current { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(sawCancellation.current)
        gate.continuation.finish()
    }
}
