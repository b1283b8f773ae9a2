import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import Testing

/// The HLS downloader against a real nginx serving the ffmpeg-made
/// fixtures: what is fetched (counted in nginx's access log), how it is
/// keyed and pinned, resume, augment, and the assets it refuses.
@Suite("HLS downloader", .serialized)
struct HLSDownloaderTests {
    static func fixture(_ path: String) throws -> Data {
        try Data(contentsOf: Fixtures.directory.appendingPathComponent("HLS/" + path))
    }

    @Test("master: low variant, English audio, subtitles; every resource stored, pinned, bytes equal; progress adds up")
    func downloadsSelection() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache)
        let master = origin.url("master/master.m3u8")
        let download = downloader.download(
            master, variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .all)
        try await download.completion()
        let plan = try #require(download.plan)
        let paths = plan.resources.map { $0.url.path }
        #expect(paths.contains("/master/low_0.ts") && paths.contains("/master/english_2.ts"))
        #expect(paths.contains("/master/high0.vtt"))
        #expect(!paths.contains { $0.hasSuffix("high.m3u8") || $0.hasSuffix(".ts") && $0.contains("/high_") })
        #expect(!paths.contains { $0.contains("french") })
        for resource in plan.resources {
            let entry = try #require(try test.store.info(forKey: resource.cacheKey.storeKey))
            #expect(entry.isComplete && entry.isPinned, "\(resource.url.path)")
            let stored = try #require(try test.store.data(forKey: resource.cacheKey.storeKey))
            #expect(stored == (try Self.fixture(String(resource.url.path.dropFirst()))))
            #expect(entry.metadata.userInfo[HLSEntryMetadata.asset] == download.assetKey)
        }
        let progress = download.snapshot
        #expect(progress.state == .completed)
        #expect(progress.resources == plan.resources.count && progress.totalResources == plan.resources.count)
        #expect(progress.segments == 2 + 3 + 2 && progress.totalSegments == 7)
        #expect(abs(progress.seconds - 4) < 0.01 && progress.totalSeconds == progress.seconds)
        let expectedBytes = try plan.resources.reduce(0) {
            $0 + (try Self.fixture(String($1.url.path.dropFirst()))).count
        }
        #expect(progress.bytes == expectedBytes)
        #expect(download.progress.completedUnitCount == Int64(plan.resources.count))
        // One origin request per resource, none twice.
        await origin.waitForLog(atLeast: plan.resources.count)
        let requests = origin.requests()
        #expect(requests.count == plan.resources.count, "\(requests)")
        #expect(Set(requests).count == requests.count)
        #expect(try downloader.entries(of: master).count == plan.resources.count)
    }

    @Test("augment: adding French fetches only its playlist and segments; a second run of the same fetches nothing")
    func augmentFetchesOnlyTheNewRendition() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache)
        let master = origin.url("master/master.m3u8")
        try await downloader.download(master, variant: .lowestBandwidth, audio: .languages(["en"])).completion()
        await origin.waitForLog(atLeast: 7)
        let first = origin.requests().count
        #expect(first == 1 + 2 + 2 + 3)
        let augment = downloader.download(master, variant: .lowestBandwidth, audio: .languages(["en", "fr"]))
        try await augment.completion()
        await origin.waitForLog(atLeast: first + 4)
        let added = Array(origin.requests().dropFirst(first))
        #expect(
            added.sorted() == [
                "GET /master/french.m3u8", "GET /master/french_0.ts", "GET /master/french_1.ts",
                "GET /master/french_2.ts",
            ])
        #expect(augment.snapshot.fetchedResources == 4)
        #expect(augment.snapshot.resources == augment.snapshot.totalResources)
        let again = downloader.download(master, variant: .lowestBandwidth, audio: .languages(["en", "fr"]))
        try await again.completion()
        try await Task.sleep(for: .milliseconds(100))
        #expect(origin.requests().count == first + 4)
        #expect(again.snapshot.fetchedResources == 0)
    }

    @Test("resume after a relaunch: only the missing segments are fetched")
    func resumeFetchesOnlyMissing() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let master = origin.url("master/master.m3u8")
        try await HLSDownloader(cache: test.cache).download(master, variant: .first, audio: .all).completion()
        let plan = try #require(
            try await HLSDownloader(cache: test.cache).download(master, variant: .first, audio: .all)
                .planAfterCompletion())
        // Lose three segments, as a download killed before them would.
        let dropped = plan.resources(of: .segment).suffix(3)
        for resource in dropped { #expect(try test.store.remove(forKey: resource.cacheKey.storeKey)) }
        try await test.relaunch()
        await origin.waitForLog(atLeast: plan.resources.count)
        let before = origin.requests().count
        let resumed = HLSDownloader(cache: test.cache).download(master, variant: .first, audio: .all)
        try await resumed.completion()
        await origin.waitForLog(atLeast: before + 3)
        let added = Array(origin.requests().dropFirst(before))
        #expect(added.sorted() == dropped.map { "GET \($0.url.path)" }.sorted())
        #expect(resumed.snapshot.fetchedResources == 3)
    }

    @Test("pause then resume completes with each resource fetched once")
    func pauseAndResume() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache, parallelFetches: 1)
        let download = downloader.download(origin.url("master/master.m3u8"), audio: .all, subtitles: .all)
        download.pause()
        #expect(download.state == .paused)
        download.resume()
        try await download.completion()
        let plan = try #require(download.plan)
        await origin.waitForLog(atLeast: plan.resources.count)
        let requests = origin.requests()
        // A fetch cut by the pause may be sent again; nothing else is.
        #expect(requests.count <= plan.resources.count + 1, "\(requests)")
        #expect(Set(requests).count == plan.resources.count)
    }

    @Test("AES-128: the key is fetched once, stored and pinned; fMP4 init segment kept")
    func keysAndInitSegments() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache)
        let aes = downloader.download(origin.url("aes/media.m3u8"))
        try await aes.completion()
        let keys = try #require(aes.plan).resources(of: .key)
        #expect(keys.count == 1)
        let key = try #require(try test.store.info(forKey: keys[0].cacheKey.storeKey))
        #expect(key.isPinned && key.length == 16)
        #expect(try test.store.data(forKey: keys[0].cacheKey.storeKey) == (try Self.fixture("aes/enc.key")))
        await origin.waitForLog(atLeast: 6)
        #expect(origin.requests().filter { $0.hasSuffix("enc.key") }.count == 1)
        let fmp4 = downloader.download(origin.url("fmp4/media.m3u8"))
        try await fmp4.completion()
        let maps = try #require(fmp4.plan).resources(of: .initializationSegment)
        #expect(maps.count == 1)
        #expect(try test.store.data(forKey: maps[0].cacheKey.storeKey) == (try Self.fixture("fmp4/init.mp4")))
    }

    @Test("single-file byte ranges: each range its own entry with exactly its bytes; one Range request each")
    func byteRangesAreDistinctEntries() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let download = HLSDownloader(cache: test.cache).download(origin.url("byterange/fmp4.m3u8"))
        try await download.completion()
        let file = try Self.fixture("byterange/fmp4.mp4")
        let ranged = try #require(download.plan).resources.filter { $0.byteRange != nil }
        #expect(ranged.count == 5)  // the init section and four segments
        #expect(Set(ranged.map(\.cacheKey.storeKey)).count == 5)
        for resource in ranged {
            let range = try #require(resource.byteRange)
            #expect(try test.store.data(forKey: resource.cacheKey.storeKey) == file.subdata(in: range.range))
        }
        #expect(try test.store.info(forKey: test.cache.cacheKey(for: origin.url("byterange/fmp4.mp4"))) == nil)
        #expect(test.origin.rangeHeaders.count == 5)
    }

    @Test("signed URLs: a token the cache-key policy drops does not split the entries")
    func signedTokensFollowThePolicy() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache(
            configuration: StreamingConfiguration(cacheKeyPolicy: .droppingQueryItems(["token"])))
        let downloader = HLSDownloader(cache: test.cache)
        try await downloader.download(URL(string: origin.url("ts/media.m3u8").absoluteString + "?token=1")!)
            .completion()
        await origin.waitForLog(atLeast: 5)
        let before = origin.requests().count
        let second = downloader.download(URL(string: origin.url("ts/media.m3u8").absoluteString + "?token=2")!)
        try await second.completion()
        #expect(second.snapshot.fetchedResources == 0)
        #expect(try test.store.info(forKey: origin.url("ts/media.m3u8").absoluteString)?.isPinned == true)
        try await Task.sleep(for: .milliseconds(100))
        #expect(origin.requests().count == before)
    }

    @Test("a live playlist is refused with a typed error and nothing is stored")
    func liveIsRefused() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let live = origin.url("ts/live.m3u8")
        let download = HLSDownloader(cache: test.cache).download(live)
        await #expect(
            throws: DownloadError.unsupported(String(describing: HLSPlanError.liveContent(playlistURL: live)))
        ) {
            try await download.completion()
        }
        #expect(try test.store.entries().isEmpty)
    }

    @Test("SAMPLE-AES / FairPlay is reported unsupported, nothing stored")
    func fairPlayIsUnsupported() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let download = HLSDownloader(cache: test.cache).download(origin.url("ts/fairplay.m3u8"))
        do {
            try await download.completion()
            Issue.record("a FairPlay playlist was downloaded")
        } catch {
            guard case .unsupported(let reason) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(reason.contains("SAMPLE-AES keys (KEYFORMAT com.apple.streamingkeydelivery, skd://"), "\(reason)")
        }
        #expect(try test.store.entries().isEmpty)
    }

    @Test("a malformed playlist fails with the parser's line; a 404 with the status")
    func malformedAndMissing() async throws {
        let origin = try HLSOrigin()
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:abc,\nsegment0.ts\n".utf8)
            .write(to: origin.root.appendingPathComponent("ts/bad.m3u8"))
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache)
        let bad = origin.url("ts/bad.m3u8")
        do {
            try await downloader.download(bad).completion()
            Issue.record("a malformed playlist was downloaded")
        } catch {
            guard case .playlist(let url, let reason) = error else { return #expect(Bool(false), "\(error)") }
            #expect(url == bad && reason.hasPrefix("line 3:"), "\(reason)")
        }
        let missing = origin.url("ts/none.m3u8")
        await #expect(throws: DownloadError.origin(status: 404, url: missing)) {
            try await downloader.download(missing).completion()
        }
    }

    @Test("release unpins every entry of the asset; remove deletes them")
    func releaseAndRemove() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let downloader = HLSDownloader(cache: test.cache)
        let url = origin.url("aes/media.m3u8")
        try await downloader.download(url).completion()
        #expect(try await downloader.release(url) == 6)
        #expect(try test.store.entries().allSatisfy { !$0.isPinned })
        #expect(try await downloader.remove(url) == 6)
        #expect(try test.store.entries().isEmpty)
    }

    @Test("a resource two kept assets share stays pinned and stored until both are released/removed")
    func sharedResourcesOutliveOneAsset() async throws {
        let origin = try HLSOrigin()
        let master = origin.url("master/master.m3u8")
        // The lone media playlist of the master's low variant: an asset of its own sharing it.
        let low = origin.url("master/low.m3u8")
        for removeMasterFirst in [true, false] {
            let test = try TestCache()
            let downloader = HLSDownloader(cache: test.cache)
            let masterPlan = try #require(
                try await downloader.download(master, variant: .lowestBandwidth).planAfterCompletion())
            let lowPlan = try #require(try await downloader.download(low).planAfterCompletion())
            let (gone, kept) = removeMasterFirst ? (master, lowPlan) : (low, masterPlan)
            let keptURL = removeMasterFirst ? low : master
            let shared = Set(lowPlan.resources.map(\.cacheKey.storeKey))
            #expect(shared.isSubset(of: Set(masterPlan.resources.map(\.cacheKey.storeKey))))
            _ = try await downloader.release(gone)
            _ = try await downloader.remove(gone)
            for resource in kept.resources {
                let entry = try #require(try test.store.info(forKey: resource.cacheKey.storeKey), "\(resource.url)")
                #expect(entry.isComplete && entry.isPinned, "\(resource.url)")
            }
            // Nothing of the removed asset is left but what the kept one shares; cachetool groups the rest.
            #expect(Set(try test.store.entries().map(\.key)) == Set(kept.resources.map(\.cacheKey.storeKey)))
            let summary = try #require(
                try HLSAssetSummary.asset(
                    downloader.resources.resourceKey(for: keptURL).storeKey, in: test.store))
            #expect(summary.entries.count == kept.resources.count && summary.isPinned)
            #expect(try HLSAssetSummary.assets(in: test.store).count == 1)
            #expect(try await downloader.remove(keptURL) == kept.resources.count)
            #expect(try test.store.entries().isEmpty)
        }
    }
}

extension MediaDownload {
    /// The plan, once the download has completed.
    func planAfterCompletion() async throws -> HLSDownloadPlan? {
        try await completion()
        return plan
    }
}
