import Foundation
import MediaDownloads
import MediaStreaming
import MediaSupport
import Testing

/// The activity feed takes each download's status from the queue's
/// `updates()`. A burst of changes (one save telling hundreds of
/// downloads, as `cancelAll()` does) while the feed is busy must not drop
/// a status: a member whose end is lost stays in flight, and the activity
/// never ends. No origin: performers that run until cancelled.
@Suite("Download activity feed: a burst of changes", .timeLimit(.minutes(2)))
struct DownloadActivityFeedBurstTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("Every download of a cancel-all of more than the queue's buffer ends the activity, cancelled")
    func cancelAllOfManyEndsTheActivity() async throws {
        let test = try TestCache()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        let count = 300
        for index in 0..<count {
            let key = "burst-\(index)"
            try await queue.enqueue(
                URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: HangingPerformer.kind)
        }
        // Armed: the feed's next title holds the feed (the record it takes) until the gate opens.
        let armed = Locked<BlockingGate?>(nil)
        let feed = DownloadActivityFeed(queue: queue, refreshInterval: .milliseconds(20)) { record in
            armed.withLock { armed -> BlockingGate? in
                defer { armed = nil }
                return armed
            }?.pass()
            return record.cacheKey
        }
        var changes = await feed.changes().makeAsyncIterator()
        let first = await changes.next()
        #expect(first?.state.inFlight == count)
        let gate = BlockingGate()
        armed.withLock { $0 = gate }
        // One save tells the 300 cancels while the feed is held at the first.
        try await queue.cancelAll()
        await gate.arrived()
        gate.open()
        let end = Locked<DownloadActivityChange?>(nil)
        let collecting = Task {
            while let change = await changes.next() {
                if case .end = change {
                    end.withLock { $0 = change }
                    return
                }
            }
        }
        await eventually("the activity ends") { end.current != nil }
        collecting.cancel()
        let state = try #require(end.current).state
        #expect(state.phase == .cancelled)
        #expect(state.cancelled == count)
    }
}
