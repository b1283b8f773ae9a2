import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// `OfflineDownloader.release` and `HLSDownloader.release` release only
/// their own holds: a ``DownloadQueue`` download of the same key or asset
/// keeps holding its entries (it says completed, and they are not
/// evictable), `HLSDownloader.remove` leaves them in the store, and the
/// queue's own remove lets them go.
@Suite("Release leaves what the download queue holds", .serialized, .timeLimit(.minutes(2)))
struct DownloadQueueReleaseTests {
    enum Before: String, CaseIterable, CustomTestStringConvertible {
        /// Only the queue held the entry.
        case queueOnly
        /// An offline download completed (and held) it before the queue took it.
        case offlineFirst
        var testDescription: String { rawValue }
    }

    @Test("OfflineDownloader.release leaves a completed queue download's entry held", arguments: Before.allCases)
    func offlineReleaseLeavesTheQueuesPin(_ before: Before) async throws {
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let test = try TestCache(origin: FakeOrigin(serving: content))
        let store = try #require(test.store)
        let url = URL(string: "https://example.invalid/release-\(before.rawValue)")!
        let key = test.cache.cacheKey(for: url)
        let downloader = OfflineDownloader(cache: test.cache)
        let offline = OfflineDownloader.holder(ofKey: key)
        if before == .offlineFirst {
            try await downloader.download(url).completion()
            #expect(try store.holders(of: key) == [offline])
        }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)))
        let record = try await queue.enqueue(url)
        try await queue.completion(of: record.id)
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: key) == (before == .offlineFirst ? [offline, holder].sorted() : [holder]))

        try downloader.release(url)
        #expect(await queue.download(record.id)?.status == .completed)
        #expect(try store.holders(of: key) == [holder], "the queue says completed, its entry is evictable")

        // Once the queue lets it go too, nobody holds it: the removal takes it.
        try await queue.remove(record.id)
        #expect(try store.info(forKey: key) == nil)
    }

    @Test("HLSDownloader.release and remove leave an asset a queue download holds")
    func hlsReleaseLeavesTheQueuesAsset() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en"]))])
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        let downloader = HLSDownloader(cache: test.cache)
        let entries = try downloader.entries(of: master)
        let expected = 8  // master, the variant's and the English playlists, 2 + 3 segments
        #expect(entries.count == expected)
        #expect(entries.allSatisfy { $0.isPinned })

        let holder = DownloadQueue.holder(of: record.id)
        for entry in entries { #expect(try test.store?.holders(of: entry.key) == [holder]) }
        #expect(try await downloader.release(master) == 0, "the asset's own holder held nothing")
        #expect(try await downloader.remove(master) == 0)
        #expect(await queue.download(record.id)?.status == .completed)
        let kept = try downloader.entries(of: master)
        #expect(kept.count == entries.count, "remove deleted the queue's asset")
        #expect(kept.allSatisfy { $0.isPinned }, "the queue says completed, its entries are evictable")

        // The queue's remove takes it; then there is nothing left to release.
        try await queue.remove(record.id)
        #expect(try downloader.entries(of: master).isEmpty)
    }
}
