import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import Testing

/// HLS assets in the persistent ``DownloadQueue`` through
/// ``HLSDownloadPerformer``, against a real nginx (requests counted in its
/// access log).
@Suite("HLS in the download queue", .serialized)
struct HLSDownloadPerformerTests {
    @Test("an HLS record waits, survives reopening the queue, then fetches only what the store lacks; pinned")
    func queuedHLSResumesAfterReopening() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        // Part of the asset is already stored (the English selection).
        try await HLSDownloader(cache: test.cache).download(
            master, variant: .lowestBandwidth, audio: .languages(["en"])
        ).completion()
        await origin.waitForLog(atLeast: 8)
        let before = origin.requests().count
        #expect(before == 1 + 2 + 2 + 3)

        let performer = HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en", "fr"]))
        let expensive = SettableConditionsMonitor(DeviceConditions(isExpensive: true))
        let queue = try await DownloadQueue.open(cache: test.cache, monitor: expensive, performers: [performer])
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind, conditions: .unmetered)
        #expect(record.kind == HLSDownloadPerformer.kind)
        let store = test.store!
        for _ in 0..<500 {
            let saved = (try? DownloadIndex(store: store).load()) ?? []
            if saved.contains(where: { $0.id == record.id }) { break }
            try await Task.sleep(for: .milliseconds(10))
        }

        var waiting = await queue.download(record.id)?.status
        for _ in 0..<500 where waiting != .waiting([.expensiveNetwork]) {
            try await Task.sleep(for: .milliseconds(10))
            waiting = await queue.download(record.id)?.status
        }
        #expect(waiting == .waiting([.expensiveNetwork]))
        #expect(origin.requests().count == before)

        // A new session over the same store, on an unmetered network: the record is restored and runs.
        test.freshCache()
        let reopened = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        #expect(await reopened.download(record.id)?.kind == HLSDownloadPerformer.kind)
        try await reopened.completion(of: record.id)
        await origin.waitForLog(atLeast: before + 4)
        try await Task.sleep(for: .milliseconds(100))
        let added = Array(origin.requests().dropFirst(before))
        #expect(
            added.sorted() == [
                "GET /master/french.m3u8", "GET /master/french_0.ts", "GET /master/french_1.ts",
                "GET /master/french_2.ts",
            ])
        let downloader = HLSDownloader(cache: test.cache)
        let entries = try downloader.entries(of: master)
        let expected = 12  // master, 3 media playlists, 2 + 3 + 3 segments
        #expect(entries.count == expected)
        #expect(entries.allSatisfy { $0.isComplete && $0.isPinned })
        let completed = await reopened.download(record.id)
        #expect(completed?.status == .completed)
        let stored = completed?.bytesStored ?? 0
        #expect(stored > 0)
    }

    @Test("a completed HLS record with a cache key of its own stays completed across reopening the queue")
    func customKeyHLSRecordStaysCompleted() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        let performer = HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en"]))
        let queue = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let record = try await queue.enqueue(master, cacheKey: "album 7", kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        #expect(await queue.download(record.id)?.status == .completed)
        await origin.waitForLog(atLeast: 8)
        try await Task.sleep(for: .milliseconds(100))
        let fetched = origin.requests().count
        #expect(fetched == 1 + 2 + 2 + 3)

        // A relaunch: the asset is all there, so the download is still done.
        test.freshCache()
        let reopened = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        #expect(await reopened.download(record.id)?.status == .completed)
        try await reopened.completion(of: record.id)
        try await Task.sleep(for: .milliseconds(100))
        #expect(origin.requests().count == fetched)
        #expect(try HLSDownloader(cache: test.cache).entries(of: master).allSatisfy { $0.isComplete && $0.isPinned })

        // The master playlist lost: the next relaunch queues the download again, and it fetches it.
        let masterKey = HLSDownloader(cache: test.cache).resources.resourceKey(for: master).storeKey
        #expect(masterKey != "album 7")
        #expect(try test.store.remove(forKey: masterKey))
        test.freshCache()
        let again = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let status = await again.download(record.id)?.status
        #expect(status != .completed, "\(String(describing: status))")
        try await again.completion(of: record.id)
        #expect(try test.store.info(forKey: masterKey)?.isComplete == true)
        await origin.waitForLog(atLeast: fetched + 1)
        #expect(origin.requests().dropFirst(fetched).contains("GET /master/master.m3u8"))
    }

    @Test("one HLS asset queued under two cache keys is one download")
    func oneAssetUnderTwoKeysIsOneDownload() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        let performer = HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en"]))
        let queue = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let first = try await queue.enqueue(master, cacheKey: "album 7", kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: first.id)
        let second = try await queue.enqueue(master, cacheKey: "album 7 again", kind: HLSDownloadPerformer.kind)
        #expect(second.id == first.id)
        #expect(await queue.downloads.count == 1)
        // A progressive download of the same URL is another kind: its own download.
        let file = try await queue.enqueue(master, cacheKey: "album 7")
        #expect(file.id != first.id)
        try await queue.remove(file.id)
    }

    @Test(
        "two selections of one HLS master: removing one keeps what the other holds, and the last remove, after a reopen, takes the asset"
    )
    func twoSelectionsOfOneMasterKeepEachOthersEntries() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        let english = HLSDownloadPerformer(kind: "hls-en", variant: .lowestBandwidth, audio: .languages(["en"]))
        let french = HLSDownloadPerformer(kind: "hls-fr", variant: .lowestBandwidth, audio: .languages(["fr"]))
        let queue = try await DownloadQueue.open(cache: test.cache, performers: [english, french])
        let first = try await queue.enqueue(master, kind: "hls-en")
        try await queue.completion(of: first.id)
        let second = try await queue.enqueue(master, kind: "hls-fr")
        #expect(second.id != first.id)
        try await queue.completion(of: second.id)
        let downloader = HLSDownloader(cache: test.cache)
        let both = try downloader.entries(of: master)
        let expected = 12  // master, 3 media playlists, 2 + 3 + 3 segments
        #expect(both.count == expected)
        #expect(both.allSatisfy { $0.isComplete && $0.isPinned })

        try await queue.remove(first.id)
        let kept = try downloader.entries(of: master)
        #expect(kept.count == both.count)
        #expect(kept.allSatisfy { $0.isComplete && $0.isPinned })
        #expect(await queue.download(second.id)?.status == .completed)

        // The pins handed over are saved: after a relaunch, the last one's remove takes the asset.
        test.freshCache()
        let reopened = try await DownloadQueue.open(cache: test.cache, performers: [english, french])
        #expect(await reopened.download(second.id)?.status == .completed)
        try await reopened.remove(second.id)
        #expect(try HLSDownloader(cache: test.cache).entries(of: master).isEmpty)
    }

    @Test("a completed HLS download missing a segment is queued again at open and fetches only that segment")
    func lostSegmentIsFetchedAgain() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        let performer = HLSDownloadPerformer(variant: .lowestBandwidth, audio: .languages(["en"]))
        let queue = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        await origin.waitForLog(atLeast: 8)
        try await Task.sleep(for: .milliseconds(100))
        let fetched = origin.requests().count
        // A segment gone (dropped as corrupt on a read, or removed by hand).
        let segment = try #require(
            try HLSDownloader(cache: test.cache).entries(of: master).first {
                $0.metadata.userInfo[HLSEntryMetadata.kind] == HLSResourceKind.segment.rawValue
            })
        #expect(try test.store.remove(forKey: segment.key))

        test.freshCache()
        let reopened = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let status = await reopened.download(record.id)?.status
        #expect(status != .completed, "\(String(describing: status))")
        try await reopened.completion(of: record.id)
        await origin.waitForLog(atLeast: fetched + 1)
        try await Task.sleep(for: .milliseconds(100))
        let path = try #require(URL(string: segment.key)?.path)
        #expect(Array(origin.requests().dropFirst(fetched)) == ["GET \(path)"])
        #expect(try HLSDownloader(cache: test.cache).entries(of: master).allSatisfy { $0.isComplete && $0.isPinned })

        // Whole again: the next open leaves it completed.
        test.freshCache()
        let again = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        #expect(await again.download(record.id)?.status == .completed)
    }
}
