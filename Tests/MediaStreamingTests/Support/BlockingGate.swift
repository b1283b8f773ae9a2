import Foundation
import MediaStore
import MediaSupport

/// A gate for a synchronous test hook (a `DownloadRunHooks` point): the
/// first thread that reaches it (``pass()``) is held until the test opens it; later ones go
/// through. With ``hold(_:at:meanwhile:)`` a test holds one synchronous
/// call there while it makes others, and waits for its end: no timing
/// involved.
final class BlockingGate: @unchecked Sendable {
    private let condition = NSCondition()
    private var isOpen = false
    private var arrivals = 0
    private var arrivalWaiters: [CheckedContinuation<Void, Never>] = []

    /// Arrives; the first arrival waits until the gate is open.
    func pass() {
        let (isFirst, waiters) = condition.withLock { () -> (Bool, [CheckedContinuation<Void, Never>]) in
            arrivals += 1
            defer { arrivalWaiters = [] }
            return (arrivals == 1, arrivalWaiters)
        }
        for waiter in waiters { waiter.resume() }
        guard isFirst else { return }
        condition.withLock {
            while !isOpen { condition.wait() }
        }
    }

    /// Waits until the first thread has arrived (and is held, unless open).
    func arrived() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = condition.withLock { () -> Bool in
                if arrivals > 0 { return true }
                arrivalWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Lets every thread through, now and from now on.
    func open() {
        condition.withLock {
            isOpen = true
            condition.broadcast()
        }
    }

    /// Runs `body` on a thread of its own (not the concurrency pool, which
    /// a held call must not block); the task ends when `body` returned.
    private static func onThread(_ body: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread {
                    body()
                    continuation.resume()
                }.start()
            }
        }
    }

    /// Runs `call` on a thread of its own with a gate installed at `hook`
    /// (`DownloadRunHooks.transition`), and once `call` is held there runs
    /// `meanwhile`; then opens the gate and waits for `call` to end
    /// (also when `meanwhile` throws). Returns what `meanwhile` returned.
    /// The gate stays installed, open: later calls go through.
    static func hold<Value>(
        _ call: @escaping @Sendable () -> Void, at hook: Locked<(@Sendable () -> Void)?>,
        meanwhile: () async throws -> Value
    ) async rethrows -> Value {
        let gate = BlockingGate()
        hook.withLock { $0 = { gate.pass() } }
        let calling = onThread(call)
        await gate.arrived()
        do {
            let value = try await meanwhile()
            gate.open()
            await calling.value
            return value
        } catch {
            gate.open()
            await calling.value
            throw error
        }
    }
}
