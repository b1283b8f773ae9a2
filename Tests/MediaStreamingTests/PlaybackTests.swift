import Foundation
import MediaStore
import MediaStreaming
import Testing

/// Behaviours 1, 2, 3, 4 and 10 of issue 4, against a real nginx.
@Suite(
    "Playback through the loader",
    .enabled(if: ExternalTool.available("nginx", "ffprobe"), "needs nginx and ffprobe (Tools/bootstrap installs them)"))
struct PlaybackTests {
    let server = NginxServer.shared

    @Test("1. A second play requests nothing from the origin and starts from the store")
    func secondPlayIsLocal() async throws {
        let test = try TestCache()
        let url = server.url("track.mp3")
        let original = try Fixtures.data("track.mp3")
        let (info, first, _) = try await test.player(url).play()
        #expect(first == original)
        #expect(info.contentLength == original.count)
        #expect(info.mimeType == "audio/mpeg")
        #expect(info.uniformTypeIdentifier == "public.mp3")
        let fetched = test.origin.bodyBytes
        #expect(fetched >= original.count && fetched <= original.count + 2 * TestCache.chunkSize)
        #expect(try await test.waitUntilComplete(url))
        #expect(try probeDuration(of: try test.storedBytes(of: url), name: "track.mp3") > 3.5)

        // The cache counts what every loader served, from the origin or the store.
        let afterFirst = test.cache.statistics
        #expect(afterFirst.bytesServedFromOrigin + afterFirst.bytesServedFromStore >= original.count)
        test.origin.reset()
        let loader = test.cache.loader(for: url)
        let (again, second, _) = try await PlayerSimulator(loader: loader).play()
        #expect(second == original)
        #expect(again.isEntireLengthAvailableOnDemand)
        #expect(test.origin.requests.isEmpty)
        #expect(test.origin.bodyBytes == 0)
        #expect(loader.statistics.bytesServedFromStore == original.count + 2)
        #expect(loader.statistics.bytesServedFromOrigin == 0)
        let delta = test.cache.statistics.since(afterFirst)
        #expect(delta.bytesServedFromStore == original.count + 2)
        #expect(delta.bytesServedFromOrigin == 0)
    }

    @Test("2. A seek into a hole fetches only that region, kept; the later sequential read does not fetch it again")
    func seekIntoHole() async throws {
        let test = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let chunk = TestCache.chunkSize
        let player = test.player(url)
        let opening = await player.load(contentInformation: true, offset: 0, length: 2)
        #expect(opening.information?.contentLength == original.count)
        // Seek to the middle: 40 KiB from an offset that is not chunk-aligned.
        let seekOffset = 20 * chunk + 1234
        let seek = await player.load(offset: seekOffset, length: 40_000)
        #expect(seek.data == original[seekOffset..<(seekOffset + 40_000)])
        // The player has its bytes once they arrive; the chunk holding the
        // last of them is written just after. Wait for it (up to 5 s).
        let seekRegion = (20 * chunk)..<(23 * chunk)
        func holdsSeekRegion(_ ranges: [Range<Int>]) -> Bool {
            ranges.contains { $0.lowerBound <= seekRegion.lowerBound && $0.upperBound >= seekRegion.upperBound }
        }
        var ranges = try test.cache.cachedRanges(for: url)
        for _ in 0..<500 where !holdsSeekRegion(ranges) {
            try await Task.sleep(for: .milliseconds(10))
            ranges = try test.cache.cachedRanges(for: url)
        }
        #expect(holdsSeekRegion(ranges))
        // Only the opening request and the seek region, rounded to chunks (and to whole requests).
        #expect(ranges.byteCount <= 2 * chunk * 2 + 4 * chunk)
        let seekRequests = test.origin.rangeHeaders.filter { !$0.hasPrefix("bytes=0-") }
        #expect(
            seekRequests.allSatisfy { header in
                let start = Int(header.dropFirst(6).split(separator: "-")[0])!
                return start % chunk == 0 && start >= 20 * chunk && start < 23 * chunk
            })

        test.origin.reset()
        let whole = await player.load(offset: 0, length: nil)
        #expect(whole.data == original)
        let refetched = test.origin.rangeHeaders.map { header -> Int in
            Int(header.dropFirst(6).split(separator: "-")[0])!
        }
        #expect(!refetched.contains { $0 >= 20 * chunk && $0 < 23 * chunk })
        #expect(test.origin.bodyBytes <= original.count - ranges.byteCount + 2 * chunk)
        #expect(try await test.waitUntilComplete(url))
    }

    @Test("3. A broken download resumes after a relaunch with only the missing chunks")
    func resumeAfterRelaunch() async throws {
        let test = try TestCache()
        let url = server.url("track.flac")
        let original = try Fixtures.data("track.flac")
        // The player goes away in the middle of the download, then the app is relaunched.
        do {
            let player = test.player(url)
            _ = await player.load(contentInformation: true, offset: 0, length: 2)
            let partial = player.start(offset: 0, length: nil)
            await partial.waitFor(bytes: original.count / 2)
            player.cancel(partial)
        }
        try await Task.sleep(for: .milliseconds(100))
        let kept = try test.cache.cachedRanges(for: url)
        #expect(kept.byteCount >= original.count / 3)
        #expect(kept.byteCount < original.count)

        try await test.relaunch()
        test.origin.reset()
        let (_, body, _) = try await test.player(url).play()
        #expect(body == original)
        let starts = test.origin.rangeHeaders.map { Int($0.dropFirst(6).split(separator: "-")[0])! }
        #expect(starts.allSatisfy { start in !kept.contains { $0.contains(start) } })
        #expect(test.origin.bodyBytes <= original.count - kept.byteCount + TestCache.chunkSize)
        #expect(try await test.waitUntilComplete(url))
        #expect(try probeDuration(of: try test.storedBytes(of: url), name: "track.flac") > 3.5)
    }

    @Test("4. Two readers of one URL share one download and both finish")
    func twoReadersShareOneDownload() async throws {
        let test = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let first = test.player(url)
        let second = test.player(url)
        async let a = first.play()
        async let b = second.play()
        let (resultA, resultB) = try await (a, b)
        #expect(resultA.1 == original)
        #expect(resultB.1 == original)
        // Each byte came once from the origin (plus at most a request's worth of overlap).
        #expect(test.origin.bodyBytes <= original.count + 2 * 2 * TestCache.chunkSize)
        let starts = test.origin.rangeHeaders.map { Int($0.dropFirst(6).split(separator: "-")[0])! }
        #expect(Set(starts).count == starts.count)
    }

    @Test("4. A second reader seeking ahead is not starved by the first")
    func seekingReaderIsNotStarved() async throws {
        let test = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let first = test.player(url)
        let second = test.player(url)
        _ = await first.load(contentInformation: true, offset: 0, length: 2)
        let sequential = first.start(offset: 0, length: nil)
        let late = await second.load(offset: original.count - 50_000, length: nil)
        #expect(late.data == original.suffix(50_000))
        let whole = await sequential.outcome()
        #expect(whole.data == original)
        #expect(test.origin.bodyBytes <= original.count + 4 * 2 * TestCache.chunkSize)
    }

    @Test("10. An item larger than the store's limit plays through uncached, with the reason")
    func oversizedPlaysUncached() async throws {
        let test = try TestCache(sizeLimit: 200_000)
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let loader = test.cache.loader(for: url)
        let (_, body, _) = try await PlayerSimulator(loader: loader).play()
        #expect(body == original)
        let reason = await loader.cachingSkippedReason
        #expect(reason?.contains("larger than the store's whole size limit") == true)
        #expect(try test.store.info(forKey: url.absoluteString) == nil)
        do {
            try await loader.downloadAll()
            Issue.record("an uncacheable download must fail")
        } catch {
            guard case .notCacheable = error else { Issue.record("unexpected \(error)"); return }
        }
    }
}
