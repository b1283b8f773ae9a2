import Foundation
import LoopbackNginx
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The queue across a process killed mid-download: `queue-app`
/// (Tests/QueueApp) runs a queue of five downloads and is killed with
/// SIGKILL while the third one downloads; this process reopens the store.
@Suite(
    "Download queue relaunch",
    .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(1)))
struct DownloadQueueRelaunchTests {
    let server = NginxServer.shared

    @Test(
        "SIGKILL mid-download: states restored, queued ones go on in order, completed stay pinned, no byte fetched twice"
    )
    func killedAndRestarted() async throws {
        let app = try #require(BuiltProduct.locate("queue-app"), "queue-app is not built beside the tests")
        let wav = try Fixtures.data("track.wav")
        // The child fetches from `/crawl/` (32 KiB/s): it is killed long
        // before the one it downloads could end. The second run fetches the
        // same files at full speed (`CrawlBypass`).
        // About 4.2 MB: some 30 s at 4 × 32 KiB/s, far longer than the
        // child runs before its kill even on a loaded machine.
        let large = Data([Data](repeating: wav, count: 6).joined())
        let names = ["b", "c", "d", "e"].map { "relaunch-\($0).wav" }
        for name in names { try server.publish(name == names[1] ? large : wav, at: name) }
        let urls = [server.url("track.mp3")] + names.map { server.url("crawl/\($0)") }
        let directory = temporaryPath("queue-relaunch")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        // The first run: killed once the third download has some bytes.
        // (Its output goes beside the store: a store's directory holds nothing else.)
        let output = temporaryPath("queue-relaunch-output")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try QueueAppChild(
            app, [directory.path] + urls.map(\.absoluteString), output: output)
        let sawProgress = await child.waitForLine(timeout: .seconds(20)) { lines in
            lines.contains("0 completed \(try! Fixtures.data("track.mp3").count)")
                && lines.contains { line in
                    let fields = line.split(separator: " ")
                    return fields.count == 3 && fields[0] == "2" && fields[1] == "downloading"
                        // Received over its connections: a whole chunk stored on each.
                        && (Int(fields[2]) ?? 0)
                            >= 2 * ProgressiveDownloadPerformer.defaultConnections * TestCache.chunkSize
                }
        }
        child.kill()
        #expect(sawProgress, "the child's lines: \(child.lines)")

        let storeConfiguration = StoreConfiguration(chunkSize: TestCache.chunkSize, initialMapSize: 64 << 20)
        let store = try MediaStore(directory: directory, configuration: storeConfiguration)
        // As the index was left, reconciled: the running one is queued again.
        let restored = try DownloadIndex(store: store).load()
        #expect(restored.map(\.url) == urls, "queue order: the order enqueued (nothing was resumed)")
        let byURL = Dictionary(uniqueKeysWithValues: restored.map { ($0.url, $0) })
        #expect(byURL[urls[0]]?.status == .completed)
        #expect(byURL[urls[1]]?.status == .stopped(.user))
        #expect(byURL[urls[2]]?.status == .queued)
        #expect(byURL[urls[3]]?.status == .queued)
        #expect(byURL[urls[4]]?.status == .queued)
        let completedInfo = try #require(try store.info(forKey: urls[0].absoluteString))
        #expect(completedInfo.isComplete && completedInfo.isPinned)
        let keptRanges = try store.cachedRanges(forKey: urls[2].absoluteString)
        let kept = keptRanges.reduce(0) { $0 + $1.count }
        #expect(kept >= TestCache.chunkSize && kept < large.count, "\(kept) bytes of the interrupted one")
        #expect(try store.info(forKey: urls[2].absoluteString)?.isPinned == true, "its partial bytes are held")

        // The second run: they go on, in order, from where they were.
        let origin = FakeOrigin(CrawlBypass())
        let cache = StreamingCache(
            store: store, origin: origin,
            configuration: StreamingConfiguration(chunksPerRequest: 16, stallTimeout: .seconds(5)))
        let queue = try await DownloadQueue.open(
            cache: cache, configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 1))
        let updates = await queue.updates()
        var completionOrder: [URL] = []
        let pending = restored.filter { $0.status == .queued }.count
        for await record in updates where record.status == .completed {
            completionOrder.append(record.url)
            if completionOrder.count == pending { break }
        }
        #expect(completionOrder == [urls[2], urls[3], urls[4]])
        #expect(await queue.download(byURL[urls[1]]!.id)?.status == .stopped(.user))
        for (url, original) in zip(urls[2...4], [large, wav, wav]) {
            let info = try #require(try store.info(forKey: url.absoluteString))
            #expect(info.isComplete && info.isPinned)
            #expect(try store.read(forKey: url.absoluteString, range: 0..<original.count) == original)
        }
        #expect(try store.info(forKey: urls[0].absoluteString)?.isPinned == true)
        // No stored byte asked for again: the interrupted one starts at its first missing chunk.
        // (Its segments, fetched over several connections, left it in pieces.)
        let resumed = origin.requests.filter { $0.request.url == urls[2] }.compactMap(\.request.range)
        #expect(!resumed.isEmpty, "the interrupted one was not fetched again")
        #expect(
            resumed.allSatisfy { asked in !keptRanges.contains { $0.overlaps(asked) } },
            "\(resumed) asked, \(keptRanges) kept")
        #expect(origin.bodyBytes(for: urls[2]) <= large.count - kept)
        #expect(origin.requests.allSatisfy { $0.request.url != urls[0] }, "the completed one is not fetched")
    }
}

/// Fetches `/crawl/…` URLs from `/…` at full speed (the same files).
struct CrawlBypass: Origin {
    let base = HTTPOrigin(timeout: .seconds(10))

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        var fast = request
        fast.url = URL(string: request.url.absoluteString.replacingOccurrences(of: "/crawl/", with: "/")) ?? request.url
        return try await base.fetch(fast)
    }
}

/// `queue-app`, its standard output written to a file and read back line
/// by line.
///
/// It used to be a Foundation `Process` whose output pipe was read by
/// `FileHandle.readabilityHandler`: a libdispatch read source on the pipe,
/// cancelled and closed when the handle goes away, without waiting for the
/// cancellation. That is the pattern of the libdispatch crashes on Linux
/// (swift-corelibs-foundation #4791: a descriptor closed while its source
/// is still registered), and the test process crashed in
/// `_dispatch_event_loop_drain` while this test was killing its child. A
/// `ChildProcess` (posix_spawn, no inherited descriptors, `waitpid`) and a
/// file use no dispatch source at all.
final class QueueAppChild: Sendable {
    private let process: ChildProcess
    private let output: URL

    init(_ executable: URL, _ arguments: [String], output: URL) throws {
        self.output = output
        process = try ChildProcess(executable.path, arguments, standardOutput: output.path)
    }

    /// The complete lines written so far.
    var lines: [String] {
        guard let data = FileManager.default.contents(atPath: output.path),
            let end = data.lastIndex(of: 0x0A)
        else { return [] }
        return data[..<end].split(separator: 0x0A, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// Waits until `condition` holds for the lines so far; false on timeout or exit.
    func waitForLine(timeout: Duration, _ condition: ([String]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        // A cancelled task's sleep throws at once: it stops instead of spinning.
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if condition(lines) { return true }
            if !process.isRunning { return condition(lines) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        // A task held past the deadline by a busy machine looks once more:
        // the line may have come while it waited.
        return condition(lines)
    }

    /// SIGKILL, then waits for it.
    func kill() {
        process.kill()
        process.waitUntilExit()
    }

    deinit { kill() }
}
