import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

/// HLS downloads of the queue through a ``BackgroundTransfer``, against
/// ``FakeTransferService`` (a service in memory that outlives the
/// queue's "process"): every resource (playlists, init section, key,
/// segments, byte ranges of one file) fetched as a task and imported,
/// a relaunch mid-way that fetches nothing twice, ends that arrived
/// while the app was not running, short and corrupt files reported and
/// fetched again, failed tasks retried, the bound on tasks at once, a
/// stop and resume, and a cancel that cancels the tasks.
@Suite("Background transfer of HLS downloads", .timeLimit(.minutes(1)))
struct BackgroundHLSQueueTests {
    static let base = URL(string: "https://media.example/show/")!
    let master = base.appendingPathComponent("master.m3u8")
    let media = base.appendingPathComponent("low/index.m3u8")

    /// Self-describing bytes: `name@offset;` repeated, `count` bytes.
    static func body(_ name: String, count: Int) -> Data {
        var data = Data()
        while data.count < count { data.append(contentsOf: "\(name)@\(data.count);".utf8) }
        return data.prefix(count)
    }

    /// The asset's resources by URL: the master, its variant's media
    /// playlist (an init section, a key, four whole segments, two byte
    /// ranges of one file).
    static let resources: [(url: URL, data: Data)] = {
        let low = base.appendingPathComponent("low/")
        let masterText = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nlow/index.m3u8\n"
        var mediaText = """
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:4
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-KEY:METHOD=AES-128,URI="key.bin"

            """
        for index in 0..<4 { mediaText += "#EXTINF:4.0,\nseg\(index).m4s\n" }
        mediaText += "#EXT-X-BYTERANGE:30000@0\n#EXTINF:4.0,\ntail.m4s\n"
        mediaText += "#EXT-X-BYTERANGE:20000@30000\n#EXTINF:4.0,\ntail.m4s\n#EXT-X-ENDLIST\n"
        var list: [(URL, Data)] = [
            (base.appendingPathComponent("master.m3u8"), Data(masterText.utf8)),
            (low.appendingPathComponent("index.m3u8"), Data(mediaText.utf8)),
            (low.appendingPathComponent("init.mp4"), body("init", count: 700)),
            (low.appendingPathComponent("key.bin"), body("k", count: 16)),
            (low.appendingPathComponent("tail.m4s"), body("tail", count: 50000)),
        ]
        for index in 0..<4 {
            list.append((low.appendingPathComponent("seg\(index).m4s"), body("seg\(index)", count: 40000 + index * 7)))
        }
        return list
    }()

    /// Resources of the plan: master, media playlist, init, key, 6 segments.
    static let resourceCount = 10

    struct Setup {
        let test: TestCache
        let service: FakeTransferService
        let inboxDirectory: URL
        let performer: HLSDownloadPerformer

        init(backgroundTasks: Int = 16) throws {
            test = try TestCache()
            service = try FakeTransferService(scratch: test.directory.appendingPathExtension("scratch"))
            inboxDirectory = test.directory.appendingPathExtension("inbox")
            var performer = HLSDownloadPerformer()
            performer.backgroundTasks = backgroundTasks
            self.performer = performer
            for (url, data) in BackgroundHLSQueueTests.resources { service.publish(data, at: url) }
        }

        /// A process: an inbox over the directory, attached to the service, and a queue.
        func open(
            importFailed: @escaping @Sendable (DownloadRecord, TransferImportError) -> Void = { _, _ in }
        ) async throws -> DownloadQueue {
            let connection = service.connect(inbox: try TransferInbox(directory: inboxDirectory))
            var configuration = DownloadQueueConfiguration()
            configuration.backgroundTransfer = connection
            configuration.importFailed = importFailed
            return try await DownloadQueue.open(
                cache: test.cache, configuration: configuration, performers: [performer])
        }

        /// The task of the resource at `url` (`range`) of download `id`.
        func task(_ id: UUID, _ url: URL, range: ByteRange? = nil) -> String {
            let key = HLSResourceKey(key: test.cache.cacheKey(for: url), byteRange: range).storeKey
            return BackgroundFetch.identifier(download: id, key: key).description
        }

        /// The store key of the resource task `identifier` fetches.
        func key(of identifier: String) -> String? {
            guard let request = service.started.first(where: { $0.request.identifier == identifier })?.request else {
                return nil
            }
            let range = request.range.flatMap { ByteRange(offset: $0.lowerBound, length: $0.count) }
            return HLSResourceKey(key: test.cache.cacheKey(for: request.url), byteRange: range).storeKey
        }

        /// Every resource's entry holds its bytes, complete and held by download `id`.
        func expectStored(_ id: UUID) throws {
            let store = test.store!
            let holder = DownloadQueue.holder(of: id)
            for (url, data) in BackgroundHLSQueueTests.resources {
                let key = HLSResourceKey(key: test.cache.cacheKey(for: url)).storeKey
                if url.lastPathComponent == "tail.m4s" {
                    for range in [ByteRange(offset: 0, length: 30000)!, ByteRange(offset: 30000, length: 20000)!] {
                        let rangeKey = HLSResourceKey(key: test.cache.cacheKey(for: url), byteRange: range).storeKey
                        #expect(try store.data(forKey: rangeKey) == data[range.range], "\(rangeKey)")
                        #expect(try store.holders(of: rangeKey) == [holder])
                        #expect(try store.info(forKey: rangeKey)?.isComplete == true)
                    }
                    #expect(try store.info(forKey: key) == nil, "the whole file is not an entry")
                    continue
                }
                #expect(try store.data(forKey: key) == data, "\(url)")
                #expect(try store.holders(of: key) == [holder], "\(url)")
                #expect(try store.info(forKey: key)?.isComplete == true, "\(url)")
            }
        }
    }

    /// Waits (up to 5 s) until `condition` holds.
    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// Ends the playlists' tasks as they start, then waits until `count` segment tasks run.
    func finishPlaylists(of id: UUID, in setup: Setup, thenRunning count: Int) async throws {
        for url in [master, media] {
            let task = setup.task(id, url)
            #expect(try await eventually { setup.service.running.contains(task) })
            setup.service.finish(task)
        }
        #expect(try await eventually { setup.service.running.count == count })
    }

    @Test("An HLS asset downloaded fully in background: a task per resource, each imported as a fetch stores it")
    func downloadedInBackground() async throws {
        let setup = try Setup()
        setup.service.state.withLock { $0.autoFinish = true }
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
        let started = setup.service.started.map(\.request.identifier)
        #expect(started.count == Self.resourceCount && Set(started).count == started.count, "once each")
        #expect(setup.test.origin.requestCount == 0, "nothing in the foreground")
        let ranges = setup.service.started.compactMap(\.request.range).sorted { $0.lowerBound < $1.lowerBound }
        #expect(ranges == [0..<30000, 30000..<50000])
        // As the foreground run keeps them: the asset's entries, every one complete and held.
        let entries = try HLSDownloader(cache: setup.test.cache).entries(of: master)
        #expect(entries.count == Self.resourceCount)
        #expect(entries.allSatisfy { $0.isComplete && $0.isPinned })
        #expect(setup.performer.keys(of: record, in: setup.test.cache).count == Self.resourceCount)
        let progress = await queue.download(record.id)
        #expect(progress?.status == .completed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.service.scratch.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.inboxDirectory.path).isEmpty)
    }

    @Test(
        "The background run keeps the same entries as a foreground run: keys, bytes, metadata, digest, holds, no expiry"
    )
    func sameEntriesAsForeground() async throws {
        let background = try Setup()
        background.service.state.withLock { $0.autoFinish = true }
        let backgroundQueue = try await background.open()
        let backgroundRecord = try await backgroundQueue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await backgroundQueue.completion(of: backgroundRecord.id)

        let foreground = try TestCache(origin: MemoryOrigin(Self.resources))
        let foregroundQueue = try await DownloadQueue.open(
            cache: foreground.cache, performers: [HLSDownloadPerformer()])
        let foregroundRecord = try await foregroundQueue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await foregroundQueue.completion(of: foregroundRecord.id)
        #expect(foreground.origin.requestCount == Self.resourceCount)

        let keys = try HLSDownloader(cache: foreground.cache).entries(of: master).map(\.key).sorted()
        #expect(keys.count == Self.resourceCount)
        #expect(try HLSDownloader(cache: background.test.cache).entries(of: master).map(\.key).sorted() == keys)
        for key in keys {
            let expected = try #require(try foreground.store.info(forKey: key))
            let info = try #require(try background.test.store.info(forKey: key))
            #expect(try background.test.store.data(forKey: key) == foreground.store.data(forKey: key), "\(key)")
            #expect(info.metadata == expected.metadata, "\(key)")
            #expect(info.length == expected.length && info.isComplete && expected.isComplete, "\(key)")
            #expect(info.contentDigest == expected.contentDigest, "\(key)")
            #expect(info.expiry == expected.expiry, "\(key)")
            #expect(try background.test.store.holders(of: key) == [DownloadQueue.holder(of: backgroundRecord.id)])
            #expect(try foreground.store.holders(of: key) == [DownloadQueue.holder(of: foregroundRecord.id)])
        }
    }

    @Test("Killed mid-way and relaunched: running tasks adopted, delivered files imported, nothing fetched twice")
    func killedAndRelaunched() async throws {
        let setup = try Setup()
        let failures = Locked<[String]>([])
        var queue: DownloadQueue? = try await setup.open { _, error in failures.withLock { $0.append("\(error)") } }
        let record = try await queue!.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        let segments = setup.service.running
        // Two imported while the process runs.
        for task in segments.prefix(2) { setup.service.finish(task) }
        let imported = segments.prefix(2).compactMap(setup.key(of:))
        #expect(imported.count == 2)
        #expect(
            try await eventually {
                try imported.allSatisfy { try setup.test.store.info(forKey: $0)?.isComplete == true }
            })
        // The process ends: its queue goes, the service keeps the tasks.
        setup.service.detach()
        queue = nil
        try await Task.sleep(for: .milliseconds(50))
        #expect(setup.service.running.count == segments.count - 2 && setup.service.cancelled.isEmpty)
        // Two end while the app is not running.
        for task in segments.dropFirst(2).prefix(2) { setup.service.finish(task) }
        try await setup.test.relaunch()
        let relaunched = try await setup.open { _, error in failures.withLock { $0.append("second \(error)") } }
        #expect(try await eventually { await relaunched.download(record.id)?.status == .downloading })
        try await Task.sleep(for: .milliseconds(100))
        #expect(setup.service.started.count == Self.resourceCount, "adopted, none started again")
        for task in setup.service.running { setup.service.finish(task) }
        try await relaunched.completion(of: record.id)
        try setup.expectStored(record.id)
        let started = setup.service.started.map(\.request.identifier)
        #expect(
            started.count == Self.resourceCount && Set(started).count == started.count,
            "\(setup.service.started.map { FakeTransferService.name(of: $0.request) })")
        #expect(failures.current.isEmpty, "no import failed")
        #expect(setup.service.cancelled.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.inboxDirectory.path).isEmpty)
    }

    @Test("Every task ended while the app was not running: the next launch imports them all, fetching nothing")
    func endedWhileNotRunning() async throws {
        let setup = try Setup()
        var queue: DownloadQueue? = try await setup.open()
        let record = try await queue!.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        setup.service.detach()
        queue = nil
        try await setup.test.relaunch()
        for task in setup.service.running { setup.service.finish(task) }
        #expect(setup.service.running.isEmpty)
        let relaunched = try await setup.open()
        try await relaunched.completion(of: record.id)
        try setup.expectStored(record.id)
        #expect(setup.service.started.count == Self.resourceCount, "nothing fetched again")
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.inboxDirectory.path).isEmpty)
    }

    @Test("A short segment file and a corrupt byte range are reported, fetched again and imported")
    func importFailuresRetried() async throws {
        let setup = try Setup()
        let failures = Locked<[TransferImportError]>([])
        let queue = try await setup.open { _, error in failures.withLock { $0.append(error) } }
        let problems = await queue.problems()
        let low = Self.base.appendingPathComponent("low/")
        let short = FakeTransferService.name(low.appendingPathComponent("seg1.m4s"))
        let corrupt = FakeTransferService.name(low.appendingPathComponent("tail.m4s"), range: 30000..<50000)
        setup.service.state.withLock {
            $0.autoFinish = true
            $0.taskFaults = [short: [.truncate(100)], corrupt: [.wrongContentRange]]
        }
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
        #expect(failures.current.count == 2)
        #expect(failures.current.contains(.sizeMismatch(expected: 40007, actual: 39907)))
        #expect(failures.current.contains { if case .contentRange = $0 { true } else { false } })
        let started = setup.service.started.map { FakeTransferService.name(of: $0.request) }
        #expect(started.filter { $0 == short }.count == 2 && started.filter { $0 == corrupt }.count == 2)
        #expect(started.count == Self.resourceCount + 2)
        var told = 0
        for await problem in problems {
            if case .transfer(let reason) = problem, reason.contains("import") { told += 1 }
            if told == 2 { break }
        }
        #expect(told == 2)
    }

    @Test("A segment whose file is short at every import fails the download; nothing of it is published")
    func importFailuresBounded() async throws {
        let setup = try Setup()
        let queue = try await setup.open()
        let segment = Self.base.appendingPathComponent("low/seg2.m4s")
        let short = FakeTransferService.name(segment)
        setup.service.state.withLock {
            $0.autoFinish = true
            $0.taskFaults = [short: [.truncate(1), .truncate(1), .truncate(1)]]
        }
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        await #expect(throws: DownloadError.self) { try await queue.completion(of: record.id) }
        #expect(setup.service.started.filter { FakeTransferService.name(of: $0.request) == short }.count == 3)
        let key = HLSResourceKey(key: setup.test.cache.cacheKey(for: segment)).storeKey
        #expect(try setup.test.store.info(forKey: key) == nil)
    }

    /// A download whose segment tasks run, stopped while its run is held
    /// in the import of its first segment, before it keeps it (`gate`
    /// lets the stopped run go on); `tasks`: the segment tasks that ran.
    func stoppedWhileImporting(_ setup: Setup) async throws -> (
        queue: DownloadQueue, record: DownloadRecord, tasks: [String], gate: AsyncGate
    ) {
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        let tasks = setup.service.running
        let gate = AsyncGate()
        let hooks = setup.test.cache.configuration.resourceStoreHooks
        hooks.keep.withLock { $0 = { _ in await gate.pass() } }
        setup.service.finish(tasks[0])
        await gate.arrived()
        hooks.keep.withLock { $0 = nil }
        try await queue.stop(record.id)
        return (queue, record, tasks, gate)
    }

    @Test(
        "Stopped then resumed while the stopped run still ends: the new run begins after it, and no task of it is cancelled"
    )
    func resumeWhileStoppedRunEnds() async throws {
        let setup = try Setup()
        let (queue, record, tasks, gate) = try await stoppedWhileImporting(setup)
        #expect(try await eventually { setup.service.running.isEmpty })
        let startedBefore = setup.service.started.count
        try await queue.resume(record.id)
        // The new run waits for the stopped one: it starts no task of the
        // names the stopped run may still cancel.
        try await Task.sleep(for: .milliseconds(300))
        #expect(setup.service.started.count == startedBefore, "the new run began before the stopped one ended")
        let cancelledBefore = setup.service.cancelled.count
        gate.open()
        // The stopped run ends (its import dropped); the new run starts a
        // task for each resource it lacks, the held one's too.
        #expect(try await eventually { setup.service.running.count == tasks.count })
        #expect(setup.service.cancelled.count == cancelledBefore, "cancelled: \(setup.service.cancelled)")
        for task in setup.service.running { setup.service.finish(task) }
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
    }

    @Test("A run waiting for the stopped one to end is stopped at once when its download is cancelled")
    func cancelWhileWaitingForStoppedRun() async throws {
        let setup = try Setup()
        let (queue, record, _, gate) = try await stoppedWhileImporting(setup)
        try await queue.resume(record.id)
        let startedBefore = setup.service.started.count
        // The stopped run is still held: the cancel ends the waiting run without it.
        try await queue.cancel(record.id)
        let status = await queue.download(record.id)?.status
        #expect({ if case .failed(.cancelled) = status { true } else { false } }(), "\(String(describing: status))")
        gate.open()
        try await Task.sleep(for: .milliseconds(300))
        #expect(setup.service.started.count == startedBefore, "a cancelled run started tasks")
        #expect(try await eventually { setup.service.running.isEmpty }, "still running: \(setup.service.running)")
    }

    @Test("A failed download cancels its other tasks: none goes on fetching for a download that will not import it")
    func failedCancelsTasks() async throws {
        let setup = try Setup()
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        let tasks = setup.service.running
        let failing = tasks[0]
        // Short at every import (importAttempts is 3): the run fails.
        for attempt in 0..<3 {
            #expect(try await eventually { setup.service.running.contains(failing) }, "attempt \(attempt)")
            setup.service.finish(failing, fault: .truncate(1))
        }
        await #expect(throws: DownloadError.self) { try await queue.completion(of: record.id) }
        let status = await queue.download(record.id)?.status
        #expect({ if case .failed = status { true } else { false } }(), "\(String(describing: status))")
        #expect(try await eventually { setup.service.running.isEmpty }, "still running: \(setup.service.running)")
        #expect(setup.service.cancelled.sorted() == Array(tasks.dropFirst()).sorted())
    }

    @Test("A failed segment task is started again from its resume data, and the download completes")
    func failedTaskRetried() async throws {
        let setup = try Setup()
        let queue = try await setup.open()
        let failing = FakeTransferService.name(Self.base.appendingPathComponent("low/seg3.m4s"))
        setup.service.state.withLock {
            $0.autoFinish = true
            $0.taskFailures = [failing: 2]
        }
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
        let starts = setup.service.started.filter { FakeTransferService.name(of: $0.request) == failing }
        let task = starts.first?.request.identifier ?? ""
        #expect(starts.map(\.resumeData) == [nil, Data("partial \(task)".utf8), Data("partial \(task)".utf8)])
    }

    @Test("At most the performer's backgroundTasks run at once for one download")
    func boundedTasks() async throws {
        let setup = try Setup(backgroundTasks: 3)
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: 3)
        while true {
            try await Task.sleep(for: .milliseconds(20))
            let running = setup.service.running
            if running.isEmpty && setup.service.started.count == Self.resourceCount { break }
            #expect(running.count <= 3)
            if let task = running.first { setup.service.finish(task) }
        }
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
        #expect(setup.service.state.withLock { $0.mostRunning } == 3)
    }

    @Test("Stopped: its tasks are cancelled; resumed: only the resources it lacks get a task")
    func stopAndResume() async throws {
        let setup = try Setup()
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        let segments = setup.service.running
        for task in segments.prefix(3) { setup.service.finish(task) }
        let imported = segments.prefix(3).compactMap(setup.key(of:))
        #expect(
            try await eventually {
                try imported.allSatisfy { try setup.test.store.info(forKey: $0)?.isComplete == true }
            })
        try await queue.stop(record.id)
        #expect(try await eventually { setup.service.running.isEmpty })
        #expect(setup.service.cancelled.sorted() == Array(segments.dropFirst(3)).sorted())
        setup.service.state.withLock { $0.autoFinish = true }
        try await queue.resume(record.id)
        try await queue.completion(of: record.id)
        try setup.expectStored(record.id)
        let again = setup.service.started.dropFirst(Self.resourceCount).map(\.request.identifier)
        #expect(again.sorted() == Array(segments.dropFirst(3)).sorted(), "the playlists and imported ones stored")
        #expect(setup.service.started.dropFirst(Self.resourceCount).allSatisfy { $0.resumeData == nil })
    }

    @Test("Cancelling the download cancels its tasks; its entries stay cached, not held")
    func cancelRemovesTasks() async throws {
        let setup = try Setup()
        let queue = try await setup.open()
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        try await finishPlaylists(of: record.id, in: setup, thenRunning: Self.resourceCount - 2)
        let segments = setup.service.running
        setup.service.finish(segments[0])
        #expect(try await eventually { setup.service.running.count == segments.count - 1 })
        try await queue.cancel(record.id)
        #expect(try await eventually { setup.service.running.isEmpty })
        #expect(setup.service.cancelled.sorted() == Array(segments.dropFirst()).sorted())
        try await Task.sleep(for: .milliseconds(50))
        #expect(setup.service.started.count == Self.resourceCount, "nothing started after the cancel")
    }
}

/// An origin answering from resources in memory, by URL: 200 with the
/// whole body, 206 to a range (for the foreground run compared with a
/// background one).
private struct MemoryOrigin: Origin {
    let resources: [URL: Data]

    init(_ resources: [(url: URL, data: Data)]) {
        self.resources = Dictionary(resources.map { ($0.url, $0.data) }, uniquingKeysWith: { first, _ in first })
    }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        guard let data = resources[request.url] else {
            return OriginResponse(statusCode: 404, headers: [:], body: AsyncThrowingStream { $0.finish() })
        }
        var headers = ["ETag": "\"v1\"", "Content-Type": "application/octet-stream"]
        var body = data
        var status = 200
        if let range = request.range {
            let clamped = range.clamped(to: 0..<data.count)
            body = data[clamped]
            status = 206
            headers["Content-Range"] = "bytes \(clamped.lowerBound)-\(clamped.upperBound - 1)/\(data.count)"
        }
        headers["Content-Length"] = String(body.count)
        let bytes = Data(body)
        return OriginResponse(
            statusCode: status, headers: headers,
            body: AsyncThrowingStream {
                $0.yield(bytes)
                $0.finish()
            })
    }
}
