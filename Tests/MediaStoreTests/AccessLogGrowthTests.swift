import Foundation
import Testing

@testable import MediaStore

/// Review: the access log keeps one pair per read, not per entry.
@Suite struct AccessLogGrowthTests {
    /// While a write holds the writer lock, reads of one entry should
    /// keep one pending time (the dictionary did); the log keeps one per read.
    @Test func readsOfOneEntryDuringALongWriteKeepOnePendingTime() throws {
        let t = try TestStore()
        let store: MediaStore = t.store
        try store.put([1, 2, 3], forKey: "k")
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? store.performBatch { _ in
                started.signal()
                release.wait()
            }
            finished.signal()
        }
        started.wait()
        for _ in 0..<10_000 { _ = try store.data(forKey: "k") }
        let pending = store.pendingAccess.withLock { $0.count }
        release.signal()
        finished.wait()
        store.waitForAccessFlush()
        #expect(pending <= MediaStore.accessBatchSize)
    }

    /// Reading one entry over and over should not make background writes
    /// (one per 2,048 reads now; none with the dictionary, which counted entries).
    @Test func readingOneEntryRepeatedlyMakesNoBackgroundWrite() throws {
        let t = try TestStore()
        let store: MediaStore = t.store
        try store.put([1, 2, 3], forKey: "k")
        let tick = { try store.read { try $0.index.find("k")?.record.accessTick } }
        let before = try tick()
        for _ in 0..<10_000 { _ = try store.data(forKey: "k") }
        store.waitForAccessFlush()
        let after = try tick()
        #expect(after == before, "background writes: \(String(describing: after)) vs \(String(describing: before))")
    }
}

/// Review: a flush that finds the log empty because a write took it out
/// returns before that write has committed (or restored) the times.
@Suite struct AccessFlushRaceTests {
    @Test func flushWaitsForTheWriteThatHoldsTheTimes() throws {
        let t = try TestStore()
        let store: MediaStore = t.store
        try store.put([1, 2, 3], forKey: "k")
        let written = try #require(try store.info(forKey: "k")).lastAccess
        Thread.sleep(forTimeInterval: 0.01)
        _ = try store.data(forKey: "k")
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? store.performBatch { _ in
                started.signal()
                Thread.sleep(forTimeInterval: 0.3)
            }
            finished.signal()
        }
        started.wait()
        try store.flushAccessTimes()
        let afterFlush = try #require(try store.info(forKey: "k")).lastAccess
        finished.wait()
        #expect(afterFlush > written)
    }
}
