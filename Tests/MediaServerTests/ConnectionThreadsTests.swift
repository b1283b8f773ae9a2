import Foundation
import MediaSupport
import Testing

@testable import MediaServer

/// The connection threads: a finished connection's thread takes the next
/// one, and ends when told or after its idle time.
@Suite("Connection threads", .timeLimit(.minutes(1)))
struct ConnectionThreadsTests {
    /// Runs `work` on `threads` and returns the id of the thread it ran on, once it ran.
    private func threadRunning(on threads: ConnectionThreads) async throws -> ObjectIdentifier {
        let ran = Locked<ObjectIdentifier?>(nil)
        threads.run { ran.withLock { $0 = ObjectIdentifier(Thread.current) } }
        for _ in 0..<1000 where ran.current == nil { try await Task.sleep(for: .milliseconds(2)) }
        return try #require(ran.current)
    }

    private func waitUntil(_ threads: ConnectionThreads, waiting count: Int) async throws {
        for _ in 0..<1000 where threads.waiting != count { try await Task.sleep(for: .milliseconds(2)) }
        #expect(threads.waiting == count)
    }

    /// Tells where it was released: the thread object current then.
    private final class Sentinel: Sendable {
        let released: Locked<ObjectIdentifier?>
        init(_ released: Locked<ObjectIdentifier?>) { self.released = released }
        deinit { released.withLock { $0 = ObjectIdentifier(Thread.current) } }
    }

    /// What a thread's first work holds (a server's responder, its store's
    /// queues) is let go in the thread's body. Held by the `Thread`, it was
    /// let go in the thread's exit handlers, after the system's own (the
    /// thread current then is another object): a stopped server's store
    /// freed its dispatch queues there, and the process aborted now and
    /// then ("double free or corruption").
    @Test("A thread lets go of its first work before it exits")
    func firstWorkIsReleasedInTheThreadsBody() async throws {
        let threads = ConnectionThreads(keepIdle: 30)
        let released = Locked<ObjectIdentifier?>(nil)
        let ranOn = Locked<ObjectIdentifier?>(nil)
        do {
            let sentinel = Sentinel(released)
            threads.run {
                withExtendedLifetime(sentinel) { ranOn.withLock { $0 = ObjectIdentifier(Thread.current) } }
            }
        }
        for _ in 0..<1000 where ranOn.current == nil { try await Task.sleep(for: .milliseconds(2)) }
        try await waitUntil(threads, waiting: 1)
        #expect(released.current == nil, "released while its thread waits for more work")
        threads.endIdle()
        for _ in 0..<1000 where released.current == nil { try await Task.sleep(for: .milliseconds(2)) }
        #expect(released.current != nil && released.current == ranOn.current, "let go in the thread's exit handlers")
    }

    @Test("The next work runs on the thread that finished the last")
    func aFinishedThreadTakesTheNextWork() async throws {
        let threads = ConnectionThreads(keepIdle: 30)
        defer { threads.endIdle() }
        let first = try await threadRunning(on: threads)
        try await waitUntil(threads, waiting: 1)
        let second = try await threadRunning(on: threads)
        #expect(second == first)
        try await waitUntil(threads, waiting: 1)
    }

    @Test("Work handed over while every thread is busy gets a thread of its own")
    func busyThreadsAreNotWaitedFor() async throws {
        let threads = ConnectionThreads(keepIdle: 30)
        defer { threads.endIdle() }
        let release = Locked(false)
        let started = Locked<[ObjectIdentifier]>([])
        for _ in 0..<3 {
            threads.run {
                started.withLock { $0.append(ObjectIdentifier(Thread.current)) }
                while !release.current { usleep(1000) }
            }
        }
        for _ in 0..<1000 where started.current.count < 3 { try await Task.sleep(for: .milliseconds(2)) }
        #expect(Set(started.current).count == 3)
        release.withLock { $0 = true }
        try await waitUntil(threads, waiting: 3)
    }

    @Test("endIdle ends the waiting threads, and so does the idle time")
    func waitingThreadsEnd() async throws {
        let threads = ConnectionThreads(keepIdle: 30)
        _ = try await threadRunning(on: threads)
        try await waitUntil(threads, waiting: 1)
        threads.endIdle()
        try await waitUntil(threads, waiting: 0)
        // Work after it still runs (on a new thread).
        _ = try await threadRunning(on: threads)
        try await waitUntil(threads, waiting: 1)
        threads.endIdle()
        try await waitUntil(threads, waiting: 0)

        let brief = ConnectionThreads(keepIdle: 0.05)
        _ = try await threadRunning(on: brief)
        try await waitUntil(brief, waiting: 0)
    }

    /// A stop raises ``ConnectionThreads/endIdle()`` once the connections
    /// ended; a thread whose connection ended just before that must not
    /// wait the whole idle time after it.
    @Test("A thread whose work ends after an endIdle ends instead of waiting")
    func endIdleDuringWorkEndsItsThread() async throws {
        let threads = ConnectionThreads(keepIdle: 30)
        defer { threads.endIdle() }
        let done = Locked(false)
        threads.run {
            threads.endIdle()
            done.withLock { $0 = true }
        }
        for _ in 0..<1000 where !done.current { try await Task.sleep(for: .milliseconds(2)) }
        #expect(done.current)
        var waited = 0
        for _ in 0..<100 {
            waited = max(waited, threads.waiting)
            try await Task.sleep(for: .milliseconds(3))
        }
        #expect(waited == 0)
        // Work handed over after the endIdle is kept waiting for the next as usual.
        _ = try await threadRunning(on: threads)
        try await waitUntil(threads, waiting: 1)
    }

    /// Work handed over from several threads at once, with endIdle() and
    /// short idle times racing it: each piece runs exactly once (no work
    /// is queued for a thread that leaves without it).
    @Test("Concurrent hand-overs with endIdle racing them: every work runs once")
    func concurrentHandOversRunEachWorkOnce() async throws {
        let threads = ConnectionThreads(keepIdle: 0.002)
        defer { threads.endIdle() }
        let submitters = 4
        let perSubmitter = 300
        // Each work records its own id (submitter * perSubmitter + index).
        let ran = Locked<[Int: Int]>([:])
        let finished = Locked(0)
        for submitter in 0..<submitters {
            Thread {
                for index in 0..<perSubmitter {
                    let id = submitter * perSubmitter + index
                    threads.run {
                        if id % 7 == 0 { usleep(200) }
                        ran.withLock { $0[id, default: 0] += 1 }
                    }
                    if index % 50 == 0 { threads.endIdle() }
                    if index % 3 == 0 { usleep(100) }
                }
                finished.withLock { $0 += 1 }
            }.start()
        }
        let total = submitters * perSubmitter
        for _ in 0..<5000 where finished.current < submitters || ran.current.count < total {
            try await Task.sleep(for: .milliseconds(2))
        }
        let counts = ran.current
        #expect(counts.count == total)
        #expect(counts.values.allSatisfy { $0 == 1 })
        #expect(Set(counts.keys) == Set(0..<total))
    }
}
