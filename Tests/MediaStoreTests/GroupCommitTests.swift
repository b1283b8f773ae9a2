import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// Group commits: writes that arrive while another write commits share
/// the next commit, each returns only once that commit has ended, and a
/// write that fails takes only itself down.
@Suite struct GroupCommitTests {
    static func value(_ index: Int) -> [UInt8] {
        Array("group commit value \(index) ".utf8) + [UInt8](repeating: UInt8(index & 0xff), count: 200 + index)
    }

    /// Holds the writer inside a batch (on a thread of its own) until the
    /// returned semaphore is signalled; returns once the batch is running.
    static func holdWriter(_ store: MediaStore, finished: DispatchGroup) -> DispatchSemaphore {
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        finished.enter()
        Thread {
            defer { finished.leave() }
            try? store.performBatch { batch in
                try batch.put(Array("holder".utf8), forKey: "holder")
                inside.signal()
                release.wait()
            }
        }.start()
        inside.wait()
        return release
    }

    /// Waits until `count` writes are queued behind the held writer.
    static func waitForQueued(_ store: MediaStore, _ count: Int) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while store.writeGroups.waiting < count {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    @Test func writesQueuedDuringACommitShareTheNextOne() throws {
        let test = try TestStore()
        let store = test.store!
        let before = store.environment.lastTransactionID
        let finished = DispatchGroup()
        let release = Self.holdWriter(store, finished: finished)
        let failures = Locked<[String]>([])
        for index in 0..<7 {
            finished.enter()
            Thread {
                defer { finished.leave() }
                do {
                    try store.put(Self.value(index), forKey: "k\(index)")
                    // Returned: its commit has ended, so a reader sees it.
                    if try store.data(forKey: "k\(index)") != Data(Self.value(index)) {
                        failures.withLock { $0.append("k\(index) not readable after put returned") }
                    }
                } catch {
                    failures.withLock { $0.append("k\(index): \(error)") }
                }
            }.start()
        }
        #expect(Self.waitForQueued(store, 7), "the seven puts never queued behind the held writer")
        release.signal()
        finished.wait()
        #expect(failures.withLock { $0 } == [])
        // The held batch's commit, then one commit for all seven puts.
        #expect(store.environment.lastTransactionID - before == 2)
        for index in 0..<7 { #expect(try store.data(forKey: "k\(index)") == Data(Self.value(index))) }
        #expect(try store.data(forKey: "holder") == Data("holder".utf8))
        #expect(try store.verify().isClean)
    }

    struct Refused: Error {}

    @Test func aFailingWriteInAGroupTakesOnlyItselfDown() throws {
        let test = try TestStore()
        let store = test.store!
        try store.put(Self.value(99), forKey: "existing")
        let stale = try #require(try store.info(forKey: "existing")).version &+ 1
        let before = store.environment.lastTransactionID
        let finished = DispatchGroup()
        let release = Self.holdWriter(store, finished: finished)
        let outcomes = Locked<[String: String]>([:])
        func start(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
            finished.enter()
            Thread {
                defer { finished.leave() }
                do {
                    try body()
                    outcomes.withLock { $0[name] = "ok" }
                } catch {
                    outcomes.withLock { $0[name] = "\(type(of: error))" }
                }
            }.start()
        }
        start("a") { try store.put(Self.value(1), forKey: "a") }
        start("half batch") {
            try store.performBatch { batch in
                try batch.put(Self.value(2), forKey: "half")
                throw Refused()
            }
        }
        start("stale remove") { try store.remove(forKey: "existing", version: stale) }
        start("b") { try store.put(Self.value(3), forKey: "b") }
        #expect(Self.waitForQueued(store, 4), "the four writes never queued behind the held writer")
        release.signal()
        finished.wait()
        #expect(
            outcomes.withLock { $0 }
                == ["a": "ok", "b": "ok", "half batch": "Refused", "stale remove": "StoreError"])
        #expect(try store.data(forKey: "a") == Data(Self.value(1)))
        #expect(try store.data(forKey: "b") == Data(Self.value(3)))
        #expect(try store.data(forKey: "half") == nil, "a batch that threw left a write behind")
        #expect(try store.data(forKey: "existing") == Data(Self.value(99)))
        // The held batch's commit, then one for the writes that succeeded.
        #expect(store.environment.lastTransactionID - before == 2)
        #expect(try store.verify().isClean)
    }

    @Test func aWriteAloneLeadsItsOwnGroup() {
        let groups = WriteGroups<Int>()
        for job in 1...3 {
            #expect(groups.join(job) == [job])
            #expect(groups.waiting == 0)
            groups.finish()
        }
    }

    @Test func concurrentWritersAllLandAndShareCommits() throws {
        let test = try TestStore()
        let store = test.store!
        let before = store.environment.lastTransactionID
        let threads = 8
        let perThread = 40
        let finished = DispatchGroup()
        let failures = Locked(0)
        for thread in 0..<threads {
            finished.enter()
            Thread {
                defer { finished.leave() }
                for n in 0..<perThread {
                    let index = thread * perThread + n
                    do { try store.put(Self.value(index), forKey: "c\(index)") } catch { failures.withLock { $0 += 1 } }
                }
            }.start()
        }
        finished.wait()
        #expect(failures.withLock { $0 } == 0)
        for index in 0..<threads * perThread {
            #expect(try store.data(forKey: "c\(index)") == Data(Self.value(index)))
        }
        let commits = store.environment.lastTransactionID - before
        #expect(commits <= threads * perThread)
        print("group commit: \(threads * perThread) puts from \(threads) threads in \(commits) commits")
        #expect(try store.verify().isClean)
    }
}
