import Foundation

/// Runs an async operation from a plain thread and blocks that thread
/// (never a pool thread) until it ends, is abandoned from elsewhere, or a
/// deadline passes: the one sync-over-async bridge of the package (the
/// server's connections, cachetool's commands and the bench use it).
package final class BlockingWait<Value: Sendable, Failure: Error>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, Failure>?
    private var task: Task<Void, Never>?
    private var abandoned = false

    /// Starts `operation` at once, in a task of its own.
    package init(_ operation: @escaping @Sendable () async throws(Failure) -> Value) {
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
    package func wait(until deadline: Date) -> WaitStep<Result<Value, Failure>> {
        // Foundation on Linux traps on a deadline whose nanoseconds overflow
        // an Int64 (`Date.distantFuture`): one past a year waits without one.
        let bounded = deadline.timeIntervalSinceNow < 365 * 86_400
        condition.lock()
        defer { condition.unlock() }
        while result == nil && !abandoned {
            if !bounded {
                condition.wait()
            } else if !condition.wait(until: deadline) {
                break
            }
        }
        if let result { return .done(result) }
        return abandoned ? .stopped : .pending
    }

    /// The outcome, however long the operation takes; `nil` when
    /// ``abandon()`` was called before it came.
    package func wait() -> Result<Value, Failure>? {
        condition.lock()
        defer { condition.unlock() }
        while result == nil && !abandoned { condition.wait() }
        return result
    }

    /// Cancels the operation and makes every wait return at once, whether
    /// or not the operation notices the cancellation. Any thread.
    package func abandon() {
        condition.lock()
        abandoned = true
        condition.broadcast()
        condition.unlock()
        task?.cancel()
    }
}

/// What a wait with a deadline found: the outcome, a stop from another
/// thread, or nothing yet.
package enum WaitStep<Value> {
    case done(Value)
    case stopped
    case pending
}

extension WaitStep: Sendable where Value: Sendable {}
