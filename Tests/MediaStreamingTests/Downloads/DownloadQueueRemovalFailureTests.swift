import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A removal whose store work fails (its holds not released, its entries
/// not removed) must not forget the download: the index keeps it,
/// removing, and the next opening finishes the removal. Forgotten, its
/// holds stayed on the entries for good (no record names their holder).
@Suite("Download queue: a removal whose store work fails", .timeLimit(.minutes(1)))
struct DownloadQueueRemovalFailureTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("The failed removal is told, kept as removing, and finished at the next opening")
    func failedRemovalIsFinishedAtTheNextOpening() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "removal-failure"
        try store.put(Data(repeating: 5, count: 2 * TestCache.chunkSize), forKey: key)
        var failing = DownloadQueueConfiguration(pollInterval: .seconds(3600))
        failing.removalHook = { _ throws(StoreError) in throw .diskFull }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: failing, performers: [HangingPerformer()])
        var problems = await queue.problems().makeAsyncIterator()
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: HangingPerformer.kind)
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: key) == [holder])

        try await queue.remove(record.id)
        #expect(await problems.next() == .store(.diskFull))
        #expect(try store.holders(of: key) == [holder], "nothing was released")
        let saved = try DownloadIndex(store: store).load()
        #expect(saved.map(\.id) == [record.id], "the index still names the download")
        #expect(saved.first?.status == .removing)

        // The next opening, with a store that works: the removal is finished.
        test.freshCache()
        let reopened = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        #expect(await reopened.downloads.isEmpty)
        #expect(try store.keys(heldBy: holder).isEmpty, "its holds are released")
        #expect(try store.info(forKey: key) == nil, "its entry, which nobody else holds, is removed")
        #expect(try DownloadIndex(store: store).load().isEmpty)
    }
}
