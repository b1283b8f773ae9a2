import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// Behaviour 9 (offline downloads), the streaming item's delegate and
/// events, and the player simulator's cancellations and duplicates.
@Suite(
    "Offline downloads and items",
    .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"))
struct OfflineTests {
    let server = NginxServer.shared

    private func throttled(_ milliseconds: Int, sizeLimit: Int = 0) throws -> TestCache {
        try TestCache(
            sizeLimit: sizeLimit, accounting: .logical,
            origin: FakeOrigin(pieceDelay: .milliseconds(milliseconds)))
    }

    @Test("9. A download completes with Progress and an async progress sequence, and is pinned until released")
    func downloadPinsUntilReleased() async throws {
        let test = try TestCache()
        let url = server.url("track.flac")
        let length = try Fixtures.data("track.flac").count
        let downloader = OfflineDownloader(cache: test.cache, maxParallelDownloads: 2)
        let download = downloader.download(url)
        var seen: [DownloadProgress] = []
        for await update in download.progressUpdates() { seen.append(update) }
        #expect(download.state == .completed)
        #expect(seen.last?.bytes == length)
        #expect(seen.last?.state == .completed)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.bytes <= $1.bytes })
        #expect(download.progress.totalUnitCount == Int64(length))
        #expect(download.progress.fractionCompleted == 1)
        let info = try #require(try test.store.info(forKey: url.absoluteString))
        #expect(info.isComplete && info.isPinned)
        try downloader.release(url)
        #expect(try test.store.info(forKey: url.absoluteString)?.isPinned == false)
        #expect(downloader.downloads.isEmpty)
    }

    @Test("9. Pause keeps what was fetched; resume fetches only the missing chunks")
    func pauseAndResume() async throws {
        let test = try throttled(3)
        let url = server.url("track.wav")
        let length = try Fixtures.data("track.wav").count
        let downloader = OfflineDownloader(cache: test.cache)
        let download = downloader.download(url)
        for await update in download.progressUpdates() where update.bytes > length / 4 { break }
        download.pause()
        #expect(download.state == .paused)
        // Each of its connections ends at its next chunk boundary: wait until none sends more.
        var sent = test.origin.bodyBytes
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(200))
            if test.origin.bodyBytes == sent { break }
            sent = test.origin.bodyBytes
        }
        let kept = try test.cache.cachedRanges(for: url).byteCount
        #expect(kept > 0 && kept < length)
        let beforeResume = test.origin.bodyBytes
        download.resume()
        try await download.completion()
        #expect(download.state == .completed)
        // What a connection had of a chunk when it stopped is asked for again.
        let connections = ProgressiveDownloadPerformer.defaultConnections
        #expect(test.origin.bodyBytes - beforeResume <= length - kept + (connections + 1) * TestCache.chunkSize)
        #expect(try test.storedBytes(of: url) == (try Fixtures.data("track.wav")))
    }

    @Test("9. At most maxParallelDownloads run at once; cancel stops one and leaves it unpinned")
    func parallelLimitAndCancel() async throws {
        let test = try throttled(1)
        let downloader = OfflineDownloader(cache: test.cache, maxParallelDownloads: 1)
        let names = ["track.mp3", "track.aac", "track.m4a"]
        let downloads = names.map { downloader.download(server.url($0)) }
        let cancelled = downloader.download(server.url("track.wav"))
        cancelled.cancel()
        #expect(cancelled.state == .cancelled)
        var maxRunning = 0
        while !downloads.allSatisfy({ $0.state == .completed }) {
            maxRunning = max(maxRunning, downloads.filter { $0.state == .downloading }.count)
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(maxRunning == 1)
        for name in names { #expect(try test.store.info(forKey: server.url(name).absoluteString)?.isPinned == true) }
        #expect(try test.store.info(forKey: server.url("track.wav").absoluteString)?.isPinned != true)
        await #expect(throws: DownloadError.cancelled) { try await cancelled.completion() }
    }

    @Test("9. A pinned download survives eviction that removes unpinned entries")
    func pinnedSurvivesEviction() async throws {
        let test = try TestCache(sizeLimit: 250_000, accounting: .logical)
        let downloader = OfflineDownloader(cache: test.cache)
        let pinned = server.url("track.flac")
        try await downloader.download(pinned).completion()
        for name in ["track.mp3", "track.aac", "track.m4a", "track.ogg", "track.opus"] {
            _ = try await test.player(server.url(name)).play()
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(try test.store.info(forKey: pinned.absoluteString)?.isComplete == true)
        #expect(try test.store.statistics().evictions > 0)
        try downloader.release(pinned)
        for name in ["track.mp3", "track.aac", "track.m4a", "track.ogg", "track.opus"] {
            _ = try await test.player(server.url(name)).play()
        }
        try await Task.sleep(for: .milliseconds(100))
        #expect(try test.store.info(forKey: pinned.absoluteString) == nil)
    }

    @Test("The streaming item reports readiness, progress and completion to its delegate and its events")
    func itemDelegateAndEvents() async throws {
        let test = try TestCache()
        let url = server.url("track.m4a")
        let item = StreamingItem(url: url, cache: test.cache)
        let delegate = RecordingDelegate()
        item.delegate = delegate
        item.download()
        var events: [StreamingItemEvent] = []
        for await event in item.events {
            events.append(event)
            if case .finishedDownloading = event { break }
        }
        #expect(events.contains { if case .readyToPlay = $0 { true } else { false } })
        let length = try Fixtures.data("track.m4a").count
        #expect(events.contains(.downloadProgress(bytes: length, total: length)))
        let calls = delegate.calls
        #expect(calls.contains("ready"))
        #expect(calls.contains("progress \(length)/\(length)"))
        #expect(calls.last == "finished")
        #expect(test.cache.isCached(url))
    }

    @Test("10. The item tells its delegate why it plays without caching")
    func itemReportsUncached() async throws {
        let test = try TestCache(sizeLimit: 100_000)
        let item = StreamingItem(url: server.url("track.wav"), cache: test.cache)
        let delegate = RecordingDelegate()
        item.delegate = delegate
        _ = try await PlayerSimulator(loader: item.loader).play()
        for await event in item.events {
            if case .cachingSkipped(let reason) = event {
                #expect(reason.contains("100000"))
                break
            }
        }
        #expect(delegate.calls.contains { $0.hasPrefix("uncached") })
    }

    @Test("Player simulator: cancelled and duplicate requests")
    func cancelAndDuplicates() async throws {
        let test = try throttled(1)
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let player = test.player(url)
        _ = await player.load(contentInformation: true, offset: 0, length: 2)
        let cancelled = player.start(offset: 0, length: nil)
        await cancelled.waitFor(bytes: 50_000)
        player.cancel(cancelled)
        // AVPlayer after a seek: the same range asked twice at once.
        async let first = player.load(offset: 300_000, length: 100_000)
        async let second = player.load(offset: 300_000, length: 100_000)
        let (a, b) = await (first, second)
        #expect(a.data == original[300_000..<400_000])
        #expect(b.data == original[300_000..<400_000])
        try await Task.sleep(for: .milliseconds(50))
        let outcome = cancelled.state.withLock { $0.outcome }
        #expect(!outcome.finished && outcome.error == nil)
        #expect(cancelled.request.isCancelled)
        // The 100 KB asked twice came from the origin once.
        let starts = test.origin.rangeHeaders.map { Int($0.dropFirst(6).split(separator: "-")[0])! }
        #expect(
            starts.filter { $0 >= 300_000 - TestCache.chunkSize && $0 < 400_000 }.count
                == Set(starts.filter { $0 >= 300_000 - TestCache.chunkSize && $0 < 400_000 }).count)
    }
}

/// Records delegate calls as short strings.
final class RecordingDelegate: StreamingItemDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [String] = []
    var calls: [String] { lock.withLock { recorded } }
    private func record(_ call: String) { lock.withLock { recorded.append(call) } }

    func streamingItem(_ item: StreamingItem, didFinishDownloading entry: EntryInfo?) { record("finished") }
    func streamingItem(_ item: StreamingItem, didDownloadBytesSoFar bytesDownloaded: Int, outOf bytesExpected: Int) {
        record("progress \(bytesDownloaded)/\(bytesExpected)")
    }
    func streamingItemReadyToPlay(_ item: StreamingItem) { record("ready") }
    func streamingItemPlaybackStalled(_ item: StreamingItem) { record("stalled") }
    func streamingItem(_ item: StreamingItem, downloadingFailedWith error: StreamingError) { record("failed \(error)") }
    func streamingItem(_ item: StreamingItem, willPlayWithoutCachingBecause reason: String) {
        record("uncached \(reason)")
    }
}
