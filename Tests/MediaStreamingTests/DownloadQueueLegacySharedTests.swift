import Foundation
import MediaStore
import Testing

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
}
