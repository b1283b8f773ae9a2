import Foundation
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

/// The cache's fetch scheduler in the fetch path: a player's requests go
/// first, preloads and downloads yield between chunks and finish
/// afterwards, against a `limit_rate`-ed nginx.
@Suite(
    "Scheduling in the fetch path",
    .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(1)))
struct SchedulingTests {
    let server = NginxServer.shared

    /// Copies of the large fixture under their own names (one cache key each).
    func copies(_ names: [String]) throws -> (urls: [URL], data: Data) {
        let data = try Fixtures.data("track.wav")
        for name in names { try server.publish(data, at: name) }
        return (names.map { server.url("slow/\($0)") }, data)
    }

    /// Seconds to the first byte of a player's seek to the middle of `url`.
    func seek(_ test: TestCache, _ url: URL, length: Int = 200_000) async throws -> (firstByte: Double, data: Data) {
        let player = test.player(url)
        let outcome = await player.start(offset: 300_000, length: length).outcome()
        #expect(outcome.error == nil)
        return (try #require(outcome.firstByte), outcome.data)
    }

    /// Waits (up to 10 s) until the scheduler's snapshot satisfies
    /// `condition`; records an issue naming `what` when it never does.
    func waitFor(
        _ what: String, _ scheduler: FetchScheduler, _ condition: (FetchScheduler.Snapshot) -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition(scheduler.snapshot) {
            guard ContinuousClock.now < deadline else {
                Issue.record("never: \(what); \(scheduler.snapshot)")
                return false
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test(
        "A player's seek goes first while a download and two preloads run; they pause, then finish with no byte fetched twice",
        arguments: [1, 4])
    func playbackGoesFirst(connectionsPerHost: Int) async throws {
        let names = (0..<5).map { "sched-\(connectionsPerHost)-\($0).wav" }
        let (urls, original) = try copies(names)
        let configuration = StreamingConfiguration(
            chunksPerRequest: 16, stallTimeout: .seconds(5), connectionsPerHost: connectionsPerHost)
        let test = try TestCache(configuration: configuration)
        let scheduler = test.cache.scheduler
        // The player knows both tracks already (their first request was answered).
        for url in urls[3...4] { _ = try await test.cache.loader(for: url).contentInformation() }
        // The same seek with nothing else running (of another copy: nothing cached there).
        let baseline = try await seek(test, urls[4])
        #expect(baseline.data == original[300_000..<500_000])
        test.origin.reset()

        let download = Task { try await test.cache.loader(for: urls[0]).downloadAll(priority: .download) }
        // Progress reports per preload: the first tells what was stored
        // already, each later one a piece its reader took.
        let preloadReports = Locked([0, 0])
        let preloads = urls[1...2].enumerated().map { index, url in
            Task {
                try await test.cache.loader(for: url).downloadAll(priority: .preload) { _, _ in
                    preloadReports.withLock { $0[index] += 1 }
                }
            }
        }
        // The preloads run; the download waits behind them (at its checkpoint,
        // or for a connection). Checked, not assumed after a sleep: a
        // preload's probe, once it resolved the content information, runs
        // at a download's priority until the preload's reader joins it (the
        // download may slip a request in then), and a loaded machine may be
        // long in that moment, or still be receiving the download's first request.
        let behind = try await waitFor("the preloads read and the download waits", scheduler) {
            preloadReports.withLock { $0.filter { $0 > 1 }.count } >= min(2, connectionsPerHost)
                && $0.busy[.download] == nil
        }
        guard behind else {
            download.cancel()
            preloads.forEach { $0.cancel() }
            return
        }
        let downloadBefore = test.origin.bodyBytes(for: urls[0])
        try await Task.sleep(for: .milliseconds(500))
        let preloading = urls[1...2].allSatisfy {
            (try? test.store.info(forKey: $0.absoluteString)?.isComplete) != true
        }
        // Not yielding, it would fetch its whole rest meanwhile; yielding, at
        // most what slips in while no preload transfer is busy (between one
        // of their downloads and the next): a request's worth on a loaded machine.
        let downloaded = test.origin.bodyBytes(for: urls[0]) - downloadBefore
        let requestBytes = 16 * TestCache.chunkSize
        #expect(!preloading || downloaded <= requestBytes, "a download yields to preloads: \(downloaded)")

        let player = test.player(urls[3])
        let handle = player.start(offset: 300_000, length: 200_000)
        await handle.waitFor(bytes: 1)
        // Once the others reached a chunk boundary (each ended its response
        // and waits at its checkpoint: checked, not assumed after a sleep),
        // they fetch nothing while the player's transfer runs (unless that
        // is over already: then the window below is empty).
        let paused = try await waitFor("every lower transfer pauses for the player", scheduler) {
            ($0.busy[.preload] == nil && $0.busy[.download] == nil) || handle.received >= 200_000
        }
        guard paused else {
            download.cancel()
            preloads.forEach { $0.cancel() }
            return
        }
        let lowerBefore = urls[0...2].map { test.origin.bodyBytes(for: $0) }.reduce(0, +)
        let windowStart = ContinuousClock.now
        await handle.waitFor(bytes: 200_000)
        let window = ContinuousClock.now - windowStart
        let lowerDuring = urls[0...2].map { test.origin.bodyBytes(for: $0) }.reduce(0, +) - lowerBefore
        let during = await handle.outcome()
        #expect(during.error == nil)
        #expect(during.data == original[300_000..<500_000])
        let downloadInfo = try test.store.info(forKey: urls[0].absoluteString)
        #expect(
            downloadInfo?.isComplete != true,
            "the download is not done yet: \(String(describing: downloadInfo)) \(test.origin.requests.map { "\($0.request.url.lastPathComponent) \($0.request.rangeHeader ?? "")" })"
        )
        // At full speed they would take 512 KiB/s each; paused, at most what was in flight.
        print("lower-priority bytes while the player read: \(lowerDuring) in \(window)")
        #expect(lowerDuring <= 6 * TestCache.chunkSize, "\(lowerDuring) bytes in \(window)")
        let firstByte = try #require(during.firstByte)
        print("seek first byte: \(firstByte * 1000) ms during transfers, \(baseline.firstByte * 1000) ms alone")
        // The store's one write queue is shared (and the machine too): generous absolute slack.
        #expect(firstByte <= max(2 * baseline.firstByte, baseline.firstByte + 0.25))

        _ = try await download.value
        for preload in preloads { _ = try await preload.value }
        for url in urls[0...2] { #expect(try test.storedBytes(of: url) == original) }
        // Each byte once: every request starts where the bytes kept so far
        // end (on a chunk boundary), never again at a stored offset. What a
        // request ended early had in flight is dropped: at most the rest of
        // that request (on loopback nginx sends a request's first 512 KiB
        // at once, so it can be all of it).
        for url in urls[0...2] {
            let requests = test.origin.requests.filter { $0.request.url == url }.compactMap(\.request.range)
            let starts = requests.map(\.lowerBound)
            #expect(
                starts == starts.sorted() && Set(starts).count == starts.count, "\(url.lastPathComponent): \(requests)")
            #expect(starts.allSatisfy { $0 % TestCache.chunkSize == 0 })
            let fetched = test.origin.bodyBytes(for: url)
            let inFlightBound = zip(requests, requests.dropFirst()).map { max(0, $0.upperBound - $1.lowerBound) }
                .reduce(0, +)
            #expect(
                fetched <= original.count + inFlightBound, "\(url.lastPathComponent): \(fetched) bytes, \(requests)")
            if fetched > original.count {
                print("\(url.lastPathComponent): \(fetched - original.count) bytes in flight dropped by yields")
            }
        }
    }
}
