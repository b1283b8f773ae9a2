import Foundation

/// A gate for an async test hook (a `ResourceStoreHooks` or `ItemHooks`
/// point): tasks that reach it (``pass()``) wait until the test opens it,
/// and the test can wait until a task has arrived. It forces an
/// interleaving without sleeping: no timing involved.
///
/// Arrivals ignore cancellation (a cancelled task waits at the gate too,
/// and each records whether it was cancelled when it left).
final class AsyncGate: @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = false
    private var held: [CheckedContinuation<Void, Never>] = []
    private var arrivals = 0
    private var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    private var leftCancelled: [Bool] = []

    /// Arrives, then waits until the gate is open.
    func pass() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (waiters, resumeNow) = lock.withLock { () -> ([CheckedContinuation<Void, Never>], Bool) in
                arrivals += 1
                let waiters = arrivalWaiters.filter { $0.count <= arrivals }.map(\.continuation)
                arrivalWaiters.removeAll { $0.count <= arrivals }
                if !isOpen { held.append(continuation) }
                return (waiters, isOpen)
            }
            for waiter in waiters { waiter.resume() }
            if resumeNow { continuation.resume() }
        }
        let cancelled = Task.isCancelled
        lock.withLock { leftCancelled.append(cancelled) }
    }

    /// Waits until `count` tasks have arrived.
    func arrived(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if arrivals >= count { return true }
                arrivalWaiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The tasks that have arrived so far (for a bounded wait: `eventually`).
    var arrivalCount: Int { lock.withLock { arrivals } }

    /// Lets every task through, now and from now on.
    func open() {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { held = [] }
            return held
        }
        for continuation in released { continuation.resume() }
    }

    /// For each task that left the gate, in order: whether it was cancelled then.
    var cancellations: [Bool] { lock.withLock { leftCancelled } }

    /// A hook that holds the first run that calls it at `first` and every
    /// later run at `second` (a stopped run and the run that replaced it).
    static func firstThenSecond(_ first: AsyncGate, _ second: AsyncGate) -> @Sendable () async -> Void {
        let calls = CallCount()
        return { await (calls.next() == 1 ? first : second).pass() }
    }

    private final class CallCount: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        func next() -> Int {
            lock.withLock {
                count += 1
                return count
            }
        }
    }
}
