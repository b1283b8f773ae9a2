import Foundation
import HLSPlaylist
import MediaDownloads
import MediaDownloadsURLSessionGlue
import MediaHLS
import MediaStore
import MediaStreaming
import Testing
@_spi(StandIn) import URLSessionStandIn

/// The background URLSession adapter (URLSessionBackgroundTransfer) under a
/// real DownloadQueue and store, against the stand-in's model of the
/// system's background transfer service: a download to a file imported;
/// the app killed mid-download and relaunched (the task adopted, never
/// started twice); a task that ended while the app was not running
/// imported at the relaunch, the events' handler called after; resume
/// data from a stop and from a failure used; a short file reported and
/// fetched again; conditions on the sessions and requests. Serialized: the
/// stand-in's system is the process's.
@Suite("Background URLSession glue", .serialized, .timeLimit(.minutes(1)))
final class BackgroundSessionTests {
    let system = StandInBackgroundSystem.shared
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bg-session-\(UUID().uuidString)")
    let url = URL(string: "https://media.example/episode.mp3")!
    let chunkSize = 16 * 1024
    let data: Data
    let sessionIdentifier = "com.example.downloads"
    /// Counts above 0 while the app is "in the background".
    let appInBackground = HandlerLog()

    init() {
        system.standInReset()
        data = Data((0..<(4 * 16 * 1024 + 777)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        system.standInPublish(data, at: url)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// One app process: its store, its adapter (sessions created by the
    /// queue's opening) and its queue.
    struct App {
        let store: MediaStore
        let transfer: URLSessionBackgroundTransfer
        let queue: DownloadQueue
    }

    /// Launches the app: the store opened (again), the adapter over the
    /// inbox in the app's folder, `beforeOpen` (the app delegate's events
    /// handler), then the queue.
    func launch(
        performers: [any DownloadPerformer] = [],
        importFailed: @escaping @Sendable (DownloadRecord, TransferImportError) -> Void = { _, _ in },
        beforeOpen: (URLSessionBackgroundTransfer, MediaStore) -> Void = { _, _ in }
    ) async throws -> App {
        var store: MediaStore?
        for attempt in 0... {
            do {
                store = try MediaStore(
                    directory: directory.appendingPathComponent("store"),
                    configuration: StoreConfiguration(chunkSize: chunkSize, initialMapSize: 16 << 20))
                break
            } catch {
                // The previous process's store closes once its last user is gone.
                if attempt > 300 { throw error }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let inbox = try TransferInbox(directory: directory.appendingPathComponent("inbox"))
        let background = appInBackground
        let transfer = URLSessionBackgroundTransfer(
            identifier: sessionIdentifier, inbox: inbox, inBackground: { background.count > 0 })
        beforeOpen(transfer, store!)
        var configuration = DownloadQueueConfiguration()
        configuration.backgroundTransfer = transfer
        configuration.importFailed = importFailed
        configuration.backgroundProgressInterval = .milliseconds(20)
        let queue = try await DownloadQueue.open(
            cache: StreamingCache(store: store!), configuration: configuration, performers: performers)
        return App(store: store!, transfer: transfer, queue: queue)
    }

    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func task(of record: DownloadRecord, offset: Int = 0) -> String {
        TransferIdentifier(download: record.id, offset: offset).description
    }

    @Test("A download runs as a background download task and its file is imported")
    func downloadImported() async throws {
        let app = try await launch()
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        // The task's countOfBytesReceived is the download's progress.
        system.standInReceive(task(of: record), bytes: 3000)
        #expect(try await eventually { await app.queue.download(record.id)?.bytesStored == 3000 })
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: record.cacheKey) == data)
        #expect(try app.store.info(forKey: record.cacheKey)?.metadata.etag == "\"s1\"")
        let starts = system.standInStarts
        #expect(starts.count == 1 && starts[0].range == nil && !starts[0].isDiscretionary)
    }

    @Test(
        "An HLS asset through the background sessions: a task per resource, killed and relaunched, nothing fetched twice"
    )
    func hlsAsset() async throws {
        let base = URL(string: "https://media.example/show/")!
        let master = base.appendingPathComponent("master.m3u8")
        // Self-describing bytes: `name@offset;` repeated.
        func body(_ name: String, _ count: Int) -> Data {
            var data = Data()
            while data.count < count { data.append(contentsOf: "\(name)@\(data.count);".utf8) }
            return data.prefix(count)
        }
        var media = "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"init.mp4\"\n"
        for index in 0..<3 { media += "#EXTINF:4.0,\nseg\(index).m4s\n" }
        media += "#EXT-X-BYTERANGE:30000@0\n#EXTINF:4.0,\ntail.m4s\n"
        media += "#EXT-X-BYTERANGE:20000@30000\n#EXTINF:4.0,\ntail.m4s\n#EXT-X-ENDLIST\n"
        let low = base.appendingPathComponent("low/")
        var files: [URL: Data] = [
            master: Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nlow/index.m3u8\n".utf8),
            low.appendingPathComponent("index.m3u8"): Data(media.utf8),
            low.appendingPathComponent("init.mp4"): body("init", 700),
            low.appendingPathComponent("tail.m4s"): body("tail", 50000),
        ]
        for index in 0..<3 { files[low.appendingPathComponent("seg\(index).m4s")] = body("seg\(index)", 40000 + index) }
        for (url, data) in files { system.standInPublish(data, at: url) }

        var app: App? = try await launch(performers: [HLSDownloadPerformer()])
        let record = try await app!.queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        // The playlists first, one task each; then one per init section, segment and byte range.
        for playlist in 0..<2 {
            #expect(try await eventually { system.standInRunning.count == 1 }, "playlist \(playlist)")
            #expect(system.standInFinish(system.standInRunning[0]))
        }
        #expect(try await eventually { system.standInRunning.count == 6 }, "\(system.standInRunning)")
        for task in system.standInRunning.prefix(2) { #expect(system.standInFinish(task)) }
        #expect(try await eventually { await app!.queue.download(record.id)?.bytesStored ?? 0 > 0 })
        // Killed with four tasks running; one of them ends while the app is not running.
        system.standInTerminateApp()
        app = nil
        let ended = try #require(system.standInRunning.first)
        #expect(system.standInFinish(ended))
        let relaunched = try await launch(performers: [HLSDownloadPerformer()])
        #expect(try await eventually { system.standInRunning.count == 3 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(system.standInStarts.count == 8, "adopted, not started again: \(system.standInStarts.count)")
        for task in system.standInRunning { #expect(system.standInFinish(task)) }
        try await relaunched.queue.completion(of: record.id)
        #expect(system.standInStarts.count == 8, "each resource fetched once")
        // Every resource is an entry of its bytes, held by the download.
        let cache = StreamingCache(store: relaunched.store)
        let holder = DownloadQueue.holder(of: record.id)
        for (url, data) in files {
            var keys = [(HLSResourceKey(key: cache.cacheKey(for: url)), data)]
            if url.lastPathComponent == "tail.m4s" {
                keys = [(0, 30000), (30000, 20000)].map { offset, length in
                    let range = ByteRange(offset: offset, length: length)!
                    return (HLSResourceKey(key: cache.cacheKey(for: url), byteRange: range), data[range.range])
                }
            }
            for (key, bytes) in keys {
                #expect(try relaunched.store.data(forKey: key.storeKey) == bytes, "\(key)")
                #expect(try relaunched.store.holders(of: key.storeKey) == [holder], "\(key)")
            }
        }
    }

    @Test("A cancel names one task: of two started under one name, the other runs on")
    func cancelOneOfTwo() async throws {
        let app = try await launch()
        let name = TransferIdentifier(download: UUID(), offset: 0).description
        let request = TransferRequest(identifier: name, url: url)
        let first = try await app.transfer.start(request, resumeData: nil)
        let second = try await app.transfer.start(request, resumeData: nil)
        #expect(first != second)
        #expect(try await eventually { system.standInRunning == [name, name] })
        #expect(await app.transfer.cancel(first) != nil, "a download task cancelled produces resume data")
        #expect(try await eventually { system.standInRunning == [name] })
        #expect(await app.transfer.tasks().map(\.handle) == [second])
        #expect(await app.transfer.cancel(first) == nil, "cancelled already")
        _ = await app.transfer.cancel(second)
        #expect(try await eventually { system.standInRunning.isEmpty })
    }

    @Test("Killed mid-download and relaunched: the system's task is adopted, not started again")
    func killedAndRelaunched() async throws {
        var app: App? = try await launch()
        let record = try await app!.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        system.standInTerminateApp()
        app = nil
        let relaunched = try await launch()
        #expect(try await eventually { await relaunched.queue.download(record.id)?.status == .downloading })
        try await Task.sleep(for: .milliseconds(50))
        #expect(system.standInStarts.count == 1, "adopted")
        #expect(system.standInRunning == [task(of: record)])
        #expect(system.standInFinish(task(of: record)))
        try await relaunched.queue.completion(of: record.id)
        #expect(try relaunched.store.data(forKey: record.cacheKey) == data)
    }

    @Test("Ended while the app was not running: imported at the relaunch, then the events' handler is called")
    func endedWhileNotRunning() async throws {
        var app: App? = try await launch()
        let record = try await app!.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        system.standInTerminateApp()
        app = nil
        #expect(system.standInFinish(task(of: record)))
        let handled = HandlerLog()
        let identifier = sessionIdentifier
        let delegateCalls = HandlerLog()
        let completeWhenCalled = HandlerLog()
        let key = record.cacheKey
        let relaunched = try await launch(beforeOpen: { transfer, store in
            // The app delegate's application(_:handleEventsForBackgroundURLSession:completionHandler:).
            let other = transfer.handleEvents(forSession: "another", completionHandler: {})
            let ours = transfer.handleEvents(
                forSession: identifier,
                completionHandler: {
                    handled.record()
                    if (try? store.info(forKey: key))?.isComplete == true { completeWhenCalled.record() }
                })
            if !other && ours { delegateCalls.record() }
        })
        #expect(delegateCalls.count == 1, "only the queue's session is taken")
        try await relaunched.queue.completion(of: record.id)
        #expect(try relaunched.store.data(forKey: record.cacheKey) == data)
        #expect(try await eventually { handled.count == 1 })
        #expect(completeWhenCalled.count == 1, "called once the import was committed")
        #expect(system.standInStarts.count == 1, "nothing fetched again")
    }

    @Test("Both sessions had events: each session's handler is kept in its own slot and called once, after the imports")
    func handlerPerSession() async throws {
        let other = URL(string: "https://media.example/bonus.mp3")!
        system.standInPublish(data, at: other)
        var app: App? = try await launch()
        let plain = try await app!.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: plain)] })
        // Started while the app is in the background: the discretionary session.
        appInBackground.record()
        let discretionary = try await app!.queue.enqueue(other)
        #expect(try await eventually { system.standInRunning.count == 2 })
        #expect(system.standInStarts.map(\.isDiscretionary) == [false, true])
        system.standInTerminateApp()
        app = nil
        #expect(system.standInFinish(task(of: plain)))
        #expect(system.standInFinish(task(of: discretionary)))
        let calls = SessionCalls()
        let sessions = [sessionIdentifier, sessionIdentifier + ".discretionary"]
        let keys = [plain.cacheKey, discretionary.cacheKey]
        let relaunched = try await launch(beforeOpen: { transfer, store in
            // The system calls the app delegate once per session that has events.
            for session in sessions {
                let taken = transfer.handleEvents(
                    forSession: session,
                    completionHandler: {
                        let imported = keys.allSatisfy { (try? store.info(forKey: $0))?.isComplete == true }
                        calls.record(session, imported)
                    })
                #expect(taken)
            }
        })
        try await relaunched.queue.completion(of: plain.id)
        try await relaunched.queue.completion(of: discretionary.id)
        #expect(try await eventually { calls.current.count == 2 })
        try await Task.sleep(for: .milliseconds(50))
        #expect(
            calls.current == [sessions[0]: [true], sessions[1]: [true]], "each once, both imports committed by then")
        #expect(system.standInStarts.count == 2, "nothing fetched again")
    }

    @Test("Stopped: the task is cancelled with resume data, kept in the index and used on resume")
    func stopAndResume() async throws {
        let app = try await launch()
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        system.standInReceive(task(of: record), bytes: 20000)
        try await app.queue.stop(record.id)
        #expect(try await eventually { await app.queue.download(record.id)?.resumeData != nil })
        #expect(system.standInRunning.isEmpty)
        // Saved in the index (the save follows the change).
        let saved = { try DownloadIndex(store: app.store).load().first { $0.id == record.id }?.resumeData }
        #expect(try await eventually { try saved()?.identifier == task(of: record) })
        try await app.queue.resume(record.id)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        #expect(system.standInStarts.last?.resumedFrom == 20000)
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: record.cacheKey) == data)
    }

    @Test("A task the system cancels (background updates off) is a failure: started again from its resume data")
    func systemCancel() async throws {
        let app = try await launch()
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        system.standInReceive(task(of: record), bytes: 7000)
        #expect(system.standInSystemCancel(task(of: record)))
        // Not taken for a cancel of the app's: the download goes on, from where it was.
        #expect(try await eventually { system.standInStarts.count == 2 && system.standInRunning == [task(of: record)] })
        #expect(system.standInStarts.last?.resumedFrom == 7000)
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: record.cacheKey) == data)
    }

    @Test(
        "A lost connection: started again from its resume data; past the retry policy the download fails, keeping it"
    )
    func failureResumeData() async throws {
        let app = try await launch()
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        system.standInReceive(task(of: record), bytes: 5000)
        #expect(system.standInFail(task(of: record)))
        // Started again by the cache's retry policy, from where it was.
        #expect(try await eventually { system.standInStarts.count == 2 && system.standInRunning == [task(of: record)] })
        #expect(system.standInStarts.last?.resumedFrom == 5000)
        #expect(await app.queue.download(record.id)?.status == .downloading)
        // Lost again at every retry: the download fails, its resume data kept for a resume.
        let retries = app.queue.cache.configuration.retryPolicy.maxRetries
        for attempt in 2...(retries + 1) {
            #expect(
                try await eventually {
                    system.standInStarts.count == attempt && system.standInRunning == [task(of: record)]
                })
            system.standInReceive(task(of: record), bytes: 6000)
            #expect(system.standInFail(task(of: record)))
        }
        await #expect(throws: DownloadError.self) { try await app.queue.completion(of: record.id) }
        #expect(system.standInStarts.count == retries + 1)
        #expect(try await eventually { await app.queue.download(record.id)?.resumeData != nil })
        try await app.queue.resume(record.id)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        #expect(system.standInStarts.last?.resumedFrom == 6000)
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: record.cacheKey) == data)
    }

    @Test("A short file is reported, removed and fetched again")
    func shortFileRetried() async throws {
        let failures = HandlerLog()
        let app = try await launch(importFailed: { _, _ in failures.record() })
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        #expect(system.standInFinish(task(of: record), truncatedBy: 10))
        #expect(try await eventually { failures.count == 1 && system.standInStarts.count == 2 })
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: record.cacheKey) == data)
        let inbox = directory.appendingPathComponent("inbox")
        #expect(try FileManager.default.contentsOfDirectory(atPath: inbox.path).isEmpty)
    }

    @Test("A task started while the app is in the background goes through the discretionary session")
    func startedInBackground() async throws {
        let app = try await launch()
        appInBackground.record()
        let record = try await app.queue.enqueue(url)
        #expect(try await eventually { system.standInRunning == [task(of: record)] })
        let start = try #require(system.standInStarts.last)
        #expect(start.isDiscretionary && start.allowsExpensiveNetworkAccess)
        #expect(system.standInFinish(task(of: record)))
        try await app.queue.completion(of: record.id)
    }

    @Test("Ranges already stored are not asked for; conditions go onto the session and the request")
    func rangesAndConditions() async throws {
        let app = try await launch()
        let key = app.queue.cache.cacheKey(for: url)
        let version = try app.store.prepareEntry(
            forKey: key, length: data.count, options: WriteOptions(metadata: EntryMetadata(etag: "\"s1\""))
        ).version
        try app.store.write(data[0..<(2 * chunkSize)], at: 0, forKey: key, version: version)
        let conditions = DownloadConditions(
            allowsExpensiveNetwork: false, allowsConstrainedNetwork: false, isDiscretionary: true)
        let record = try await app.queue.enqueue(url, conditions: conditions)
        let identifier = task(of: record, offset: 2 * chunkSize)
        #expect(try await eventually { system.standInRunning == [identifier] })
        let start = try #require(system.standInStarts.last)
        #expect(start.range == "bytes=\(2 * chunkSize)-\(data.count - 1)")
        #expect(start.isDiscretionary && !start.allowsExpensiveNetworkAccess && !start.allowsConstrainedNetworkAccess)
        #expect(system.standInFinish(identifier))
        try await app.queue.completion(of: record.id)
        #expect(try app.store.data(forKey: key) == data)
    }
}

/// Counts calls from any thread.
final class HandlerLog: @unchecked Sendable {
    private let lock = NSLock()
    private var calls = 0

    func record() { lock.withLock { calls += 1 } }
    var count: Int { lock.withLock { calls } }
}

/// The calls of each session's events handler, from any thread: whether
/// the imports were committed at each.
final class SessionCalls: @unchecked Sendable {
    private let lock = NSLock()
    private var calls: [String: [Bool]] = [:]

    func record(_ session: String, _ imported: Bool) { lock.withLock { calls[session, default: []].append(imported) } }
    var current: [String: [Bool]] { lock.withLock { calls } }
}
