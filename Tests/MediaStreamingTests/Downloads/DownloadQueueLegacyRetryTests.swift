import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// An index saved before holds whose pins the queue could not adopt at
/// opening (a store write failed): the failure is told on `problems()`,
/// the records stay as before holds in the index (with the keys they noted
/// as pinned by someone else), and the next opening adopts them.
@Suite("Download queue: a failed adoption of legacy pins is retried at the next opening", .timeLimit(.minutes(1)))
struct DownloadQueueLegacyRetryTests {
    struct LegacyPerformer: UntilCancelledPerformer {
        static let kind = "legacy-retry"
        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey, "elsewhere"] }
    }

    @Test("A failed adoption is told, keeps the records legacy, and the next opening adopts them")
    func failedAdoptionIsRetried() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let record = DownloadRecord(
            url: URL(string: "https://example.invalid/legacy")!, cacheKey: "legacy", kind: LegacyPerformer.kind,
            status: .stopped(.user), queueOrder: 1)
        for key in ["legacy", "elsewhere"] {
            try store.put(Data(repeating: 4, count: 1000), forKey: key, options: WriteOptions(pinned: true))
        }
        var objects = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode([record])) as? [[String: Any]])
        objects[0]["keysPinnedElsewhere"] = ["elsewhere"]
        try store.put(
            try JSONSerialization.data(withJSONObject: objects), forKey: DownloadIndex.key,
            options: WriteOptions(expiry: .never, pinned: true))
        let holder = DownloadQueue.holder(of: record.id)

        var failing = DownloadQueueConfiguration(pollInterval: .seconds(60))
        failing.adoptionHook = { _ throws(StoreError) in throw .diskFull }
        do {
            let queue = try await DownloadQueue.open(
                cache: test.cache, configuration: failing, performers: [LegacyPerformer()])
            // The first problem told, or nil after 5 s.
            let problems = await queue.problems()
            let told = await withTaskGroup(of: DownloadError?.self) { group in
                group.addTask { await problems.first { _ in true } }
                group.addTask {
                    try? await Task.sleep(for: .seconds(5))
                    return nil
                }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
            #expect(told == .store(.diskFull), "the failed adoption was not told")
            #expect(await queue.downloads.map(\.id) == [record.id])
            #expect(try store.holders(of: "legacy").contains(MediaStore.appHolder), "the app's hold went unadopted")
            // Saved as before holds: the next opening adopts it.
            let saved = try #require(try store.data(forKey: DownloadIndex.key))
            let written = try #require(try JSONSerialization.jsonObject(with: saved) as? [[String: Any]])
            #expect(written.count == 1)
            #expect(written.first?["holder"] == nil, "saved with a holder, so never adopted again")
            #expect(written.first?["keysPinnedElsewhere"] as? [String] == ["elsewhere"])
        }

        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [LegacyPerformer()])
        #expect(try store.holders(of: "legacy") == [holder], "the next opening did not adopt the pins")
        #expect(try store.holders(of: "elsewhere") == [MediaStore.appHolder, holder].sorted())
        let saved = try #require(try store.data(forKey: DownloadIndex.key))
        let written = try #require(try JSONSerialization.jsonObject(with: saved) as? [[String: Any]])
        #expect(written.first?["holder"] as? String == holder)
        #expect(written.first?["keysPinnedElsewhere"] == nil)
        try await queue.remove(record.id)
        #expect(try store.info(forKey: "legacy") == nil)
        #expect(try store.holders(of: "elsewhere") == [MediaStore.appHolder], "a pin noted as someone else's stays")
    }
}
