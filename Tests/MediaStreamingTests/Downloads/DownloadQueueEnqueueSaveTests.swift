import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// An enqueue whose save of the download index fails: the download it
/// registered runs, so the enqueue returns it (a throw would leave the
/// caller a running download it was told was not queued) and tells the
/// failure on `problems()`; the next save writes it. No origin: a
/// performer that runs until cancelled.
@Suite("Download queue: an enqueue whose index save fails", .timeLimit(.minutes(1)))
struct DownloadQueueEnqueueSaveTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("The enqueue returns the running download, tells the failed save on problems(), and the next save writes it")
    func failedSaveReturnsTheRunningDownload() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let failing = Locked(false)
        var configuration = DownloadQueueConfiguration(pollInterval: .seconds(3600))
        configuration.indexWriteHook = { () throws(StoreError) in
            if failing.current { throw .diskFull }
        }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [HangingPerformer()])
        var problems = await queue.problems().makeAsyncIterator()
        failing.withLock { $0 = true }
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/a")!, cacheKey: "a", kind: HangingPerformer.kind)
        #expect(await problems.next() == .store(.diskFull))
        await eventually("it runs") { await queue.download(record.id)?.status == .downloading }
        #expect(await queue.downloads.map(\.id) == [record.id])
        #expect(try DownloadIndex(store: store).load().isEmpty)

        failing.withLock { $0 = false }
        try await queue.stop(record.id)
        #expect(try DownloadIndex(store: store).load().map(\.id) == [record.id])
        try await queue.cancel(record.id)
    }
}
