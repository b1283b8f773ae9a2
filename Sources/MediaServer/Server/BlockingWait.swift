import Foundation

/// Runs an async operation from a plain thread and blocks that thread
/// (never a pool thread) until it ends, is cancelled from elsewhere, or a
/// deadline passes: every wait has one.
final class BlockingWait<Value: Sendable, Failure: Error>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, Failure>?
    private var task: Task<Void, Never>?
    private var abandoned = false

    init(_ operation: @escaping @Sendable () async throws(Failure) -> Value) {
        task = Task { [self] in
            let outcome: Result<Value, Failure>
            do throws(Failure) {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            finish(outcome)
        }
    }

    private func finish(_ outcome: Result<Value, Failure>) {
        condition.lock()
        result = outcome
        condition.broadcast()
        condition.unlock()
    }

    /// The outcome if the operation ends by `deadline`: ``WaitStep/pending``
    /// when it has not, ``WaitStep/stopped`` when ``abandon()`` was called first.
    func wait(until deadline: Date) -> WaitStep<Result<Value, Failure>> {
        condition.lock()
        defer { condition.unlock() }
        while result == nil && !abandoned {
            if !condition.wait(until: deadline) { break }
        }
        if let result { return .done(result) }
        return abandoned ? .stopped : .pending
    }

    /// Cancels the operation and makes ``wait()`` return at once, whether or
    /// not the operation notices the cancellation. Any thread.
    func abandon() {
        task?.cancel()
        condition.lock()
        abandoned = true
        condition.broadcast()
        condition.unlock()
    }
}

/// What a wait with a deadline found: the outcome, a stop from another
/// thread, or nothing yet.
enum WaitStep<Value> {
    case done(Value)
    case stopped
    case pending
}
