import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// An HLS asset kept both by `HLSDownloader` (its asset's holder) and by a
/// `DownloadQueue` download (the queue download's holder, passed through
/// the HLS performer to every resource it keeps): whichever lets go first,
/// the other's holds keep every resource, and the last one's removal
/// deletes them.
@Suite("HLS resources are held by whoever downloads them", .serialized, .timeLimit(.minutes(2)))
struct HLSHolderTests {
    @Test(
        "The asset's holder and a queue download's hold the same resources; the last to let go decides",
        arguments: [true, false])
    func bothHoldersKeepTheAsset(queueFirst: Bool) async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let store = try #require(test.store)
        let master = origin.url("master/master.m3u8")
        let downloader = HLSDownloader(cache: test.cache)
        try await downloader.download(master, variant: .lowestBandwidth, audio: .languages(["en"])).completion()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en"]))])
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)

        let entries = try downloader.entries(of: master)
        #expect(entries.count == 8)  // master, the variant's and the English playlists, 2 + 3 segments
        let assetHolder = HLSDownloader.holder(ofAsset: downloader.resources.resourceKey(for: master).storeKey)
        let queueHolder = DownloadQueue.holder(of: record.id)
        for entry in entries {
            #expect(try store.holders(of: entry.key) == [assetHolder, queueHolder].sorted(), "\(entry.key)")
        }

        if queueFirst {
            try await queue.remove(record.id)
            let kept = try downloader.entries(of: master)
            #expect(kept.count == entries.count, "the queue's removal deleted what the asset holds")
            #expect(try kept.allSatisfy { try store.holders(of: $0.key) == [assetHolder] })
            #expect(try await downloader.remove(master) == entries.count)
        } else {
            #expect(try await downloader.release(master) == entries.count)
            #expect(try await downloader.remove(master) == 0, "the asset's removal deleted what the queue holds")
            #expect(try downloader.entries(of: master).allSatisfy { try store.holders(of: $0.key) == [queueHolder] })
            try await queue.remove(record.id)
        }
        #expect(try downloader.entries(of: master).isEmpty)
    }
}

/// A run's completion holds what its plan kept, not every entry grouped
/// with the asset: a selection released earlier stays evictable.
@Suite("An HLS run holds its own selection only", .serialized, .timeLimit(.minutes(2)))
struct HLSRunSelectionHoldTests {
    @Test("After a release, a download of another rendition leaves the first one's resources unheld")
    func releasedSelectionStaysUnheld() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let store = try #require(test.store)
        let master = origin.url("master/master.m3u8")
        let downloader = HLSDownloader(cache: test.cache)
        try await downloader.download(master, variant: .lowestBandwidth, audio: .languages(["en"])).completion()
        let english = try downloader.entries(of: master).filter { $0.key.contains("english") }
        #expect(english.count == 4)  // english.m3u8 and its 3 segments
        #expect(try await downloader.release(master) == 8)

        let french = downloader.download(master, variant: .lowestBandwidth, audio: .languages(["fr"]))
        try await french.completion()
        let plan = try #require(french.plan)
        #expect(plan.resources.contains { $0.url.lastPathComponent == "french.m3u8" })
        for entry in english {
            #expect(try store.holders(of: entry.key).isEmpty, "\(entry.key) held though not in the selection")
        }
        let assetHolder = HLSDownloader.holder(ofAsset: french.assetKey)
        for resource in plan.resources {
            #expect(try store.holders(of: resource.cacheKey.storeKey) == [assetHolder], "\(resource.url)")
        }
    }
}
