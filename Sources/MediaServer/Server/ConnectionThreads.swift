import Foundation
import MediaSupport

/// The threads connections run on (and accepting, which moves from thread
/// to thread), one connection per thread at a time:
/// a thread whose connection ended waits up to `keepIdle` for the next
/// one before it ends, so a new connection usually starts on a waiting
/// thread instead of a new one (a thread's start is a large part of a
/// loopback request's time). ``endIdle()`` ends the waiting threads at once,
/// and the busy ones when their work ends.
final class ConnectionThreads: @unchecked Sendable {
    private let condition = NSCondition()
    /// Work handed over and not yet taken by a waiting thread.
    private var queued: [@Sendable () -> Void] = []
    /// Threads waiting for work.
    private var idle = 0
    /// Raised by ``endIdle()``: threads given their work before it end
    /// instead of waiting for more.
    private var epoch = 0
    private let keepIdle: TimeInterval
    private let stackSize: Int

    init(keepIdle: TimeInterval = 10, stackSize: Int = 512 << 10) {
        self.keepIdle = keepIdle
        self.stackSize = stackSize
    }

    /// Runs `work` on a waiting thread, or on a new one when none waits.
    func run(_ work: @escaping @Sendable () -> Void) {
        condition.lock()
        if idle > queued.count {
            queued.append(work)
            condition.unlock()
            // Signalled once unlocked: the woken thread does not wait for the lock. A waiting thread that
            // timed out meanwhile still takes the work (it looks at the queue before it ends).
            condition.signal()
            return
        }
        let handedOver = epoch
        condition.unlock()
        // The `Thread` keeps its block until after the thread's exit handlers
        // ran: what the block holds (the pool, the first work and through it
        // a server's store) is taken out and let go in the thread's body.
        let start = Locked<(threads: ConnectionThreads, work: @Sendable () -> Void)?>((self, work))
        let thread = Thread {
            guard let (threads, first) = start.withLock({ $0.take() }) else { return }
            threads.serve(first, epoch: handedOver)
        }
        thread.name = "MediaServer connection"
        thread.stackSize = stackSize
        thread.start()
    }

    /// Runs `first`, then each work handed over to this thread until none comes.
    private func serve(_ first: @escaping @Sendable () -> Void, epoch: Int) {
        var next: (work: @Sendable () -> Void, epoch: Int)? = (first, epoch)
        while let current = next {
            current.work()
            next = waitForWork(since: current.epoch)
        }
    }

    /// The next work handed over and the epoch it was taken in; `nil` at
    /// once when ``endIdle()`` was called since `since`, or after
    /// `keepIdle` without work, or at an ``endIdle()`` meanwhile.
    private func waitForWork(since: Int) -> (work: @Sendable () -> Void, epoch: Int)? {
        condition.lock()
        defer { condition.unlock() }
        guard epoch == since else { return nil }
        idle += 1
        defer { idle -= 1 }
        let deadline = Date() + keepIdle
        while queued.isEmpty, epoch == since, condition.wait(until: deadline) {}
        return queued.isEmpty ? nil : (queued.removeFirst(), epoch)
    }

    /// How many threads wait for work now.
    var waiting: Int { condition.withLock { idle } }

    /// Ends the threads waiting for work (they exit at once), and the busy
    /// ones when their work ends.
    func endIdle() {
        condition.lock()
        epoch += 1
        condition.broadcast()
        condition.unlock()
    }
}
