import Foundation
import HLSPlaylist
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// An index saved before holds whose two downloads kept one resource
/// (an HLS segment two assets share: `hls.keepers` names both). When the
/// queue adopts both downloads' pins, each holds the resource by its own
/// holder; the app's hold stood for them only, so it goes, and removing
/// both downloads removes the resource.
@Suite("Download queue: a resource two legacy downloads shared is theirs once adopted", .timeLimit(.minutes(1)))
struct DownloadQueueLegacySharedTests {
    /// Fetches nothing; its downloads' entries are their cache key and one shared segment.
    struct SharingPerformer: UntilCancelledPerformer {
        static let kind = "legacy-sharing"
        static let segment = "https://example.invalid/shared/segment0.ts"
        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [Self.segment, record.cacheKey] }
    }

    @Test("Adopted by every download that kept it, a shared legacy resource loses the app's hold")
    func sharedLegacyResourceIsAdoptedWhole() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let records = ["a", "b"].enumerated().map { index, name in
            DownloadRecord(
                url: URL(string: "https://example.invalid/\(name)/master.m3u8")!, cacheKey: name,
                kind: SharingPerformer.kind, status: .completed, queueOrder: UInt64(index + 1))
        }
        for record in records {
            try store.put(
                Data("#EXTM3U\n".utf8), forKey: record.cacheKey,
                options: WriteOptions(
                    expiry: .never,
                    metadata: EntryMetadata(userInfo: [HLSEntryMetadata.keepers: record.cacheKey]), pinned: true))
        }
        let segment = SharingPerformer.segment
        try store.put(
            Data(repeating: 1, count: 1000), forKey: segment,
            options: WriteOptions(
                expiry: .never, metadata: EntryMetadata(userInfo: [HLSEntryMetadata.keepers: "a\nb"]), pinned: true))
        // The records as an older version saved them: no `holder` field.
        try store.put(
            try JSONEncoder().encode(records), forKey: DownloadIndex.key,
            options: WriteOptions(expiry: .never, pinned: true))

        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [SharingPerformer()])
        let holders = records.map { DownloadQueue.holder(of: $0.id) }
        #expect(try store.holders(of: segment) == holders.sorted(), "the app's hold stayed beside the downloads'")
        for (record, holder) in zip(records, holders) {
            #expect(try store.holders(of: record.cacheKey) == [holder])
        }
        for record in records { try await queue.remove(record.id) }
        #expect(try store.info(forKey: segment) == nil, "kept after both downloads that kept it were removed")
        #expect(try records.allSatisfy { try store.info(forKey: $0.cacheKey) == nil })
    }

    /// A resource a legacy queue download and a legacy `HLSDownloader`
    /// asset both kept (`hls.keepers` names both): the queue's adoption
    /// takes its asset off the list, so whichever of the two lets go last,
    /// nobody holds it after.
    @Test(
        "A resource a legacy download shared with a legacy HLSDownloader asset is let go by both",
        arguments: [false, true])
    func resourceSharedWithAnHLSAssetIsLetGo(queueFirst: Bool) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let downloader = HLSDownloader(cache: test.cache)
        let masters = [
            URL(string: "http://127.0.0.2:9/q/master.m3u8")!, URL(string: "http://127.0.0.2:9/h/master.m3u8")!,
        ]
        let segment = SharingPerformer.segment
        let assets = try LegacyHLSAssets.write(
            masters: masters, sharing: segment, in: store, resources: downloader.resources)
        // The queue's download is the first asset (its cache key), saved before holds.
        let record = DownloadRecord(
            url: masters[0], cacheKey: assets[0], kind: SharingPerformer.kind, status: .completed, queueOrder: 1)
        try store.put(
            try JSONEncoder().encode([record]), forKey: DownloadIndex.key,
            options: WriteOptions(expiry: .never, pinned: true))

        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [SharingPerformer()])
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: segment) == [MediaStore.appHolder, holder].sorted(), "the HLS asset's stays")
        if queueFirst {
            try await queue.remove(record.id)
            #expect(try store.holders(of: segment) == [MediaStore.appHolder], "the HLS asset still keeps it")
            try await downloader.release(masters[1])
        } else {
            try await downloader.release(masters[1])
            #expect(try store.holders(of: segment) == [holder], "the download still keeps it")
            try await queue.remove(record.id)
        }
        let left = try store.info(forKey: segment) == nil ? [] : try store.holders(of: segment)
        #expect(left.isEmpty, "still held after the download and the asset both let go")
    }
}
