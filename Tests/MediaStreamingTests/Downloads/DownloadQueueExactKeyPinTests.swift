import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Cache keys are compared as the store compares keys, by their bytes.
/// "café" with one scalar and with "e" plus a combining accent are two
/// entries in the store, but equal `String`s: the queue's hold on one must
/// not touch the app's on the other.
@Suite("Download queue: cache keys are compared by their bytes", .timeLimit(.minutes(1)))
struct DownloadQueueExactKeyPinTests {
    static let composed = "exact-caf\u{E9}"
    static let decomposed = "exact-cafe\u{301}"

    /// Runs until stopped; its bytes are the two entries of the pair.
    struct PairPerformer: UntilCancelledPerformer {
        static let kind = "exact-pair"

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
            [DownloadQueueExactKeyPinTests.composed, DownloadQueueExactKeyPinTests.decomposed]
        }
    }

    enum Scenario: String, CaseIterable, CustomTestStringConvertible {
        /// Stopped (the queue pins the other key), then cancelled.
        case cancel
        /// Stopped, then removed.
        case remove
        /// The app pinned both; stopped, the queue reopened (the note comes
        /// back from the index), the app unpins the other one, the download
        /// is resumed, stopped (the queue pins it) and cancelled.
        case cancelAfterReopening
        var testDescription: String { rawValue }
    }

    @Test(
        "The app's pin on one key of a canonically equal pair survives the queue's pin on the other",
        arguments: Scenario.allCases, [true, false])
    func appPinOnOneOfAPairStays(_ scenario: Scenario, appPinsComposed: Bool) async throws {
        #expect(Self.composed == Self.decomposed)
        let test = try TestCache()
        let store = try #require(test.store)
        let (app, other) = appPinsComposed ? (Self.composed, Self.decomposed) : (Self.decomposed, Self.composed)
        for key in [app, other] { try store.put(Data(repeating: 3, count: TestCache.chunkSize), forKey: key) }
        #expect(try store.entries().count == 2)
        try store.setPinned(true, forKey: app)
        if scenario == .cancelAfterReopening { try store.setPinned(true, forKey: other) }
        let configuration = DownloadQueueConfiguration(pollInterval: .seconds(60))
        var queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [PairPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/exact-pair")!, cacheKey: "exact-pair", kind: PairPerformer.kind)
        try await queue.stop(record.id)
        #expect(try store.info(forKey: other)?.isPinned == true, "a stopped download's bytes are pinned")

        if scenario == .cancelAfterReopening {
            test.freshCache()
            queue = try await DownloadQueue.open(
                cache: test.cache, configuration: configuration, performers: [PairPerformer()])
            // The app lets its pin of the other key go; the queue then pins it, its own pin.
            try store.setPinned(false, forKey: other)
            try await queue.resume(record.id)
            #expect(await queue.download(record.id)?.status == .downloading)
            try await queue.stop(record.id)
            #expect(try store.info(forKey: other)?.isPinned == true)
        }

        switch scenario {
        case .remove:
            try await queue.remove(record.id)
            #expect(try store.info(forKey: app)?.isPinned == true, "the removal dropped the app's pinned entry")
            #expect(try store.info(forKey: other) == nil, "the download's own entry is removed")
        case .cancel, .cancelAfterReopening:
            try await queue.cancel(record.id)
            #expect(try store.info(forKey: app)?.isPinned == true, "the cancel dropped the app's pin")
            #expect(try store.info(forKey: other)?.isPinned == false, "the queue's own pin stays")
        }
    }

    /// Both keys of such a pair are held by the download, each its own
    /// entry, and a cancel releases the download's holds on both, leaving the app's.
    @Test("Both keys of a pair are held apart, and the app's holds stay")
    func bothKeysOfAPairAreHeld() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        for key in [Self.composed, Self.decomposed] {
            try store.put(
                Data(repeating: 5, count: TestCache.chunkSize), forKey: key, options: WriteOptions(pinned: true))
        }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [PairPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/exact-pair")!, cacheKey: "exact-pair", kind: PairPerformer.kind)
        try await queue.stop(record.id)
        let holder = DownloadQueue.holder(of: record.id)
        for key in [Self.composed, Self.decomposed] {
            #expect(try store.holders(of: key) == [MediaStore.appHolder, holder].sorted())
        }
        #expect(
            Set(try store.keys(heldBy: holder).map { Array($0.utf8) }) == [
                Array(Self.composed.utf8), Array(Self.decomposed.utf8),
            ])
        try await queue.cancel(record.id)
        for key in [Self.composed, Self.decomposed] {
            #expect(try store.holders(of: key) == [MediaStore.appHolder])
        }
    }

    /// Two downloads whose cache keys are such a pair are two downloads
    /// (two entries): `enqueue` found the first one "already held" for the
    /// second key, and returned it, so the second entry was never fetched.
    @Test("Enqueueing the other key of a pair makes a second download")
    func enqueueKeepsAPairApart() async throws {
        let test = try TestCache()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [PairPerformer()])
        let first = try await queue.enqueue(
            URL(string: "https://example.invalid/composed")!, cacheKey: Self.composed, kind: PairPerformer.kind)
        let second = try await queue.enqueue(
            URL(string: "https://example.invalid/decomposed")!, cacheKey: Self.decomposed, kind: PairPerformer.kind)
        #expect(first.id != second.id, "the second key's download is the first one")
        #expect(Array(second.cacheKey.utf8) == Array(Self.decomposed.utf8))
        #expect(await queue.downloads.count == 2)
        // The same key again is the same download.
        let again = try await queue.enqueue(
            URL(string: "https://example.invalid/decomposed")!, cacheKey: Self.decomposed, kind: PairPerformer.kind)
        #expect(again.id == second.id)
        try await queue.cancelAll()
    }
}
