import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A run's first bytes make the queue hold the download's entries, in a
/// task of its own (the run tells its progress synchronously). That hold
/// can land late: after the run was stopped, after the queue was dropped
/// and another opened over the same store, after that one cancelled the
/// download and released its holds. A stopped run's hold must write
/// nothing then: the stop decided the holds, and the entry stayed held by
/// a download cancelled for good. The queue's `runHoldHook` is where the
/// test holds the late hold: no timing involved, and no thread blocked.
@Suite("Download queue: a stopped run's late hold lands nowhere", .timeLimit(.minutes(1)))
struct DownloadQueueLateRunHoldTests {
    /// Runs until stopped.
    struct RunHoldPerformer: UntilCancelledPerformer {
        static let kind = "gated-run-hold"
    }

    @Test("A run's first-bytes hold held past a stop, a reopening and a cancel leaves the entry unheld")
    func lateRunHoldAfterRelaunchCancel() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "late-run-hold"
        try store.put(Data(repeating: 3, count: 2 * TestCache.chunkSize), forKey: key)
        let configuration = DownloadQueueConfiguration(pollInterval: .seconds(60))
        let gate = AsyncGate()
        defer { gate.open() }
        var gated = configuration
        gated.runHoldHook = { await gate.pass() }
        var queue = try await DownloadQueue.open(
            cache: test.cache, configuration: gated, performers: [RunHoldPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: RunHoldPerformer.kind)
        // The run started with bytes stored: its hold is under way, held at the hook.
        await gate.arrived()
        let holder = DownloadQueue.holder(of: record.id)
        try await queue.stop(record.id)
        #expect(try store.holders(of: key) == [holder], "a stopped download holds its bytes")

        // A relaunch: the queue dropped (its late hold keeps it alive), another opened over the store.
        weak let dropped = queue
        test.freshCache()
        queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [RunHoldPerformer()])
        try await queue.cancel(record.id)
        #expect(await queue.download(record.id)?.status == .failed(.cancelled))
        #expect(try store.holders(of: key).isEmpty, "the cancel released the download's hold")

        // The dropped queue's hold goes on, and ends (the queue goes with it).
        gate.open()
        for _ in 0..<1000 where dropped != nil { try await Task.sleep(for: .milliseconds(5)) }
        #expect(dropped == nil, "the dropped queue's late hold ended")
        #expect(try store.holders(of: key).isEmpty, "a stopped run's late hold held a cancelled download's entry")
        #expect(try store.info(forKey: key)?.isPinned == false)
        #expect(test.origin.requests.isEmpty)
    }
}
