import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A queued download of an entry the app pinned itself (`setPinned`)
/// before: cancelling or removing the download releases only the pins the
/// queue set, so the app's pin stays (it used to be dropped, and the
/// entry became evictable). An entry only the download pinned is still
/// unpinned or removed. No origin: the entry is in the store already.
@Suite("Download queue: cancel and remove undo only the queue's own pins", .timeLimit(.minutes(1)))
struct DownloadQueuePinTests {
    /// Fetches nothing; runs until its task is cancelled.
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "pin-hanging"
    }

    enum Scenario: String, CaseIterable, CustomTestStringConvertible {
        /// Running (the queue has not pinned the entry yet), then cancelled.
        case cancelRunning
        /// Stopped (the queue pins the entry), then cancelled.
        case cancelStopped
        /// Stopped, then removed.
        case removeStopped
        /// Completed by the progressive performer (it pins the entry), then removed.
        case removeCompleted
        /// Stopped, the queue reopened over the same store (what it
        /// pinned must come back from the index), then cancelled.
        case cancelAfterReopening
        /// Stopped and cancelled, then the app pins the entry, then the
        /// download is resumed, stopped and cancelled again.
        case appPinsBetweenCancelAndResume
        var testDescription: String { rawValue }
    }

    static let configuration = DownloadQueueConfiguration(pollInterval: .seconds(60))

    @Test(
        "Cancel or remove leaves the app's pin, and still releases the queue's own",
        arguments: Scenario.allCases, [true, false])
    func cancelOrRemoveKeepsOnlyOtherPins(_ scenario: Scenario, appPinned: Bool) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let url = URL(string: "https://example.invalid/queue-pin-\(scenario.rawValue)")!
        let key = test.cache.cacheKey(for: url)
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try store.put(content, forKey: key)
        if appPinned && scenario != .appPinsBetweenCancelAndResume { try store.setPinned(true, forKey: key) }
        var queue = try await DownloadQueue.open(
            cache: test.cache, configuration: Self.configuration, performers: [HangingPerformer()])

        let kind = scenario == .removeCompleted ? nil : HangingPerformer.kind
        let record = try await queue.enqueue(url, kind: kind)
        if scenario == .removeCompleted {
            try await queue.completion(of: record.id)
        } else {
            #expect(await queue.download(record.id)?.status == .downloading)
        }
        if scenario != .cancelRunning && scenario != .removeCompleted {
            try await queue.stop(record.id)
            #expect(try store.info(forKey: key)?.isPinned == true, "a stopped download's bytes are pinned")
        }
        if scenario == .cancelAfterReopening {
            test.freshCache()
            queue = try await DownloadQueue.open(
                cache: test.cache, configuration: Self.configuration, performers: [HangingPerformer()])
            #expect(await queue.download(record.id)?.status == .stopped(.user))
        }
        if scenario == .appPinsBetweenCancelAndResume {
            try await queue.cancel(record.id)
            #expect(try store.info(forKey: key)?.isPinned == false, "the queue's own pin is released")
            if appPinned { try store.setPinned(true, forKey: key) }
            try await queue.resume(record.id)
            #expect(await queue.download(record.id)?.status == .downloading)
            try await queue.stop(record.id)
        }

        switch scenario {
        case .removeStopped, .removeCompleted:
            try await queue.remove(record.id)
            #expect(await queue.download(record.id) == nil)
            let info = try store.info(forKey: key)
            if appPinned {
                #expect(info?.isPinned == true, "the removal dropped the app's pinned entry")
                #expect(info?.isComplete == true)
            } else {
                #expect(info == nil, "the download's own entry is removed")
            }
        default:
            try await queue.cancel(record.id)
            #expect(await queue.download(record.id)?.status == .failed(.cancelled))
            let info = try #require(try store.info(forKey: key), "a cancel keeps the bytes")
            #expect(
                info.isPinned == appPinned, appPinned ? "the cancel dropped the app's pin" : "the queue's pin stays")
        }
        #expect(test.origin.requests.isEmpty)
    }

    /// An index saved before holds (records with no `holder` field, and
    /// the app's hold on their entries, as the store's upgrade left every
    /// pin) loads, and the queue adopts those pins: a download holds its
    /// entries by its own holder and the app's hold goes, except from the
    /// keys the record noted as pinned by someone else. The index written
    /// now is still an array of records an older version reads (the new
    /// field is one more key of each record).
    @Test("An index saved before holds loads; its downloads adopt their pins")
    func anIndexSavedBeforeHoldsIsAdopted() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let content = Data((0..<(2 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        let old = DownloadRecord(
            url: URL(string: "https://example.invalid/old")!, cacheKey: "old", kind: HangingPerformer.kind,
            status: .stopped(.user), queueOrder: 1)
        let shared = DownloadRecord(
            url: URL(string: "https://example.invalid/shared")!, cacheKey: "shared", kind: HangingPerformer.kind,
            status: .stopped(.user), queueOrder: 2)
        for key in ["old", "shared"] { try store.put(content, forKey: key, options: WriteOptions(pinned: true)) }
        // The records as an older version saved them: their own fields, and
        // for one the keys pinned by someone else when it was enqueued.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var objects = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode([old, shared])) as? [[String: Any]])
        objects[1]["keysPinnedElsewhere"] = ["shared"]
        try store.put(
            try JSONSerialization.data(withJSONObject: objects), forKey: DownloadIndex.key,
            options: WriteOptions(expiry: .never, pinned: true))
        #expect(try DownloadIndex(store: store).load().map(\.id) == [old.id, shared.id])

        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: Self.configuration, performers: [HangingPerformer()])
        #expect(await queue.downloads.map(\.id) == [old.id, shared.id])
        #expect(try store.holders(of: "old") == [DownloadQueue.holder(of: old.id)], "an old record's pins are its own")
        #expect(
            try store.holders(of: "shared") == [MediaStore.appHolder, DownloadQueue.holder(of: shared.id)].sorted())
        try await queue.cancel(old.id)
        try await queue.cancel(shared.id)
        #expect(try store.info(forKey: "old")?.isPinned == false)
        #expect(try store.holders(of: "shared") == [MediaStore.appHolder], "a pin noted as someone else's stays")

        // Saved again with each record's holder, in a field an older version's decoder skips.
        let saved = try #require(try store.data(forKey: DownloadIndex.key))
        let records = try JSONDecoder().decode([DownloadRecord].self, from: saved)
        #expect(Set(records.map(\.id)) == [old.id, shared.id])
        let written = try #require(try JSONSerialization.jsonObject(with: saved) as? [[String: Any]])
        #expect(written.map { $0["holder"] as? String } == [old.id, shared.id].map(DownloadQueue.holder(of:)))
        #expect(written.allSatisfy { $0["keysPinnedElsewhere"] == nil })
    }
}
