import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// One queue per store: an app that drops a queue and opens another over
/// the same store (or a second process that opens one) must not have a
/// late save of the earlier queue write its older records over the index
/// of the later one. The latest opening owns the index; the earlier
/// queue's saves are refused (`superseded`) and it stops. No origin:
/// performers that run until cancelled.
@Suite("Download queue: one owner of the index", .timeLimit(.minutes(1)))
struct DownloadQueueOwnershipTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("A save of an earlier queue that lands after a later queue opened is refused: the later index stays")
    func lateSaveOfAnEarlierQueueIsRefused() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        // Armed: the next save waits at a gate before its store write.
        let armed = ArmedGate()
        var configuration = DownloadQueueConfiguration(pollInterval: .seconds(3600))
        configuration.indexSaveHook = { await armed.pass() }
        let earlier = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [HangingPerformer()])
        let old = try await earlier.enqueue(
            URL(string: "https://example.invalid/old")!, cacheKey: "old", kind: HangingPerformer.kind)
        await eventually("the earlier one runs") { await earlier.downloads.first?.status == .downloading }
        let problems = await earlier.problems()

        // The earlier queue's stop has taken its records and waits before its write.
        let gate = AsyncGate()
        armed.arm(gate)
        let stopping = Task { try await earlier.stop(old.id) }
        await gate.arrived()

        // Meanwhile the app opens a queue over the same store and enqueues.
        let later = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        let new = try await later.enqueue(
            URL(string: "https://example.invalid/new")!, cacheKey: "new", kind: HangingPerformer.kind)

        gate.open()
        await #expect(throws: DownloadError.superseded) { try await stopping.value }
        var told = problems.makeAsyncIterator()
        #expect(await told.next() == .superseded)
        #expect(await earlier.isSuperseded)

        // As a relaunch reads the index: the later queue's enqueue is there.
        let saved = try DownloadIndex(store: store).load()
        #expect(saved.map(\.id).contains(new.id), "the earlier queue's late save wrote over the later index")
        // The earlier queue saves nothing more, and runs nothing.
        await #expect(throws: DownloadError.superseded) {
            try await earlier.enqueue(
                URL(string: "https://example.invalid/other")!, cacheKey: "other", kind: HangingPerformer.kind)
        }
        #expect(try DownloadIndex(store: store).load().map(\.cacheKey).contains("other") == false)
        try await later.cancelAll()
    }

    @Test("A queue whose store lost every entry (the owner mark too) goes on saving")
    func ownerMarkRemovedWithTheIndex() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        _ = try await queue.enqueue(
            URL(string: "https://example.invalid/a")!, cacheKey: "a", kind: HangingPerformer.kind)
        try store.removeAll()
        #expect(try store.data(forKey: DownloadIndex.ownerKey) == nil)
        let b = try await queue.enqueue(
            URL(string: "https://example.invalid/b")!, cacheKey: "b", kind: HangingPerformer.kind)
        #expect(try DownloadIndex(store: store).load().map(\.id).contains(b.id))
        #expect(await queue.isSuperseded == false)
        try await queue.cancelAll()
    }

    @Test("A queue whose owner mark alone was rewritten by another opening stops at its next save")
    func secondOpeningWins() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let first = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        let second = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        await #expect(throws: DownloadError.superseded) {
            try await first.enqueue(
                URL(string: "https://example.invalid/x")!, cacheKey: "x", kind: HangingPerformer.kind)
        }
        let y = try await second.enqueue(
            URL(string: "https://example.invalid/y")!, cacheKey: "y", kind: HangingPerformer.kind)
        #expect(try DownloadIndex(store: store).load().map(\.id) == [y.id])
        try await second.cancelAll()
    }
}
