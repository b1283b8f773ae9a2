import Foundation

/// The threads connections run on, one connection per thread at a time:
/// a thread whose connection ended waits up to `keepIdle` for the next
/// one before it ends, so a new connection usually starts on a waiting
/// thread instead of a new one (a thread's start is a large part of a
/// loopback request's time). ``endIdle()`` ends the waiting threads at once.
final class ConnectionThreads: @unchecked Sendable {
    private let condition = NSCondition()
    /// Work handed over and not yet taken by a waiting thread.
    private var queued: [@Sendable () -> Void] = []
    /// Threads waiting for work.
    private var idle = 0
    /// Raised by ``endIdle()``: threads waiting since before it end.
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
            condition.signal()
            condition.unlock()
            return
        }
        condition.unlock()
        let thread = Thread { [self] in
            var next: (@Sendable () -> Void)? = work
            while let current = next {
                current()
                next = waitForWork()
            }
        }
        thread.name = "MediaServer connection"
        thread.stackSize = stackSize
        thread.start()
    }

    /// The next work handed over, or `nil` after `keepIdle` without any or an ``endIdle()``.
    private func waitForWork() -> (@Sendable () -> Void)? {
        condition.lock()
        defer { condition.unlock() }
        idle += 1
        defer { idle -= 1 }
        let started = epoch
        let deadline = Date() + keepIdle
        while queued.isEmpty, epoch == started, condition.wait(until: deadline) {}
        return queued.isEmpty ? nil : queued.removeFirst()
    }

    /// How many threads wait for work now.
    var waiting: Int { condition.withLock { idle } }

    /// Ends the threads waiting for work (they exit at once).
    func endIdle() {
        condition.lock()
        epoch += 1
        condition.broadcast()
        condition.unlock()
    }
}
