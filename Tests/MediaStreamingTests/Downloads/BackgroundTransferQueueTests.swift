import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

/// The queue's downloads through a ``BackgroundTransfer``, against
/// ``FakeTransferService`` (a service in memory that outlives the queue's
/// "process"): imports, resume data, launch reconciliation, ends that
/// arrived while the app was not running, import failures retried, and
/// the events' completion handler.
@Suite("Background transfer queue", .timeLimit(.minutes(1)))
struct BackgroundTransferQueueTests {
    let url = URL(string: "https://media.example/track.bin")!
    /// Five chunks and a bit.
    let data = Data((0..<(5 * TestCache.chunkSize + 1234)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    struct Setup {
        let test: TestCache
        let service: FakeTransferService
        let inboxDirectory: URL

        init() throws {
            test = try TestCache()
            service = try FakeTransferService(scratch: test.directory.appendingPathExtension("scratch"))
            inboxDirectory = test.directory.appendingPathExtension("inbox")
        }

        /// A process: an inbox over the directory, attached to the service, and a queue.
        func open(
            progressInterval: Duration = .seconds(1),
            importFailed: @escaping @Sendable (DownloadRecord, TransferImportError) -> Void = { _, _ in }
        ) async throws -> (DownloadQueue, FakeTransferService.Connection) {
            let connection = service.connect(inbox: try TransferInbox(directory: inboxDirectory))
            var configuration = DownloadQueueConfiguration()
            configuration.backgroundTransfer = connection
            configuration.importFailed = importFailed
            configuration.backgroundProgressInterval = progressInterval
            return (try await DownloadQueue.open(cache: test.cache, configuration: configuration), connection)
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

    func storedRecord(_ id: UUID, in store: MediaStore) throws -> DownloadRecord? {
        try DownloadIndex(store: store).load().first { $0.id == id }
    }

    @Test("A download goes through one task and is imported: the bytes, complete, held, the file removed")
    func imported() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        setup.service.state.withLock { $0.autoFinish = true }
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        try await queue.completion(of: record.id)
        let key = record.cacheKey
        let info = try #require(try setup.test.store.info(forKey: key))
        #expect(info.isComplete && info.length == data.count)
        #expect(try setup.test.store.data(forKey: key) == data)
        #expect(try setup.test.store.holders(of: key) == [DownloadQueue.holder(of: record.id)])
        #expect(info.metadata.etag == "\"v1\"")
        let started = setup.service.started
        #expect(started.count == 1 && started[0].request.range == nil, "the whole file, asked once")
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.service.scratch.path).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.inboxDirectory.path).isEmpty)
    }

    @Test("A running task's bytes received are the download's progress, on top of the bytes stored")
    func progressWhileRunning() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        let chunk = TestCache.chunkSize
        let key = setup.test.cache.cacheKey(for: url)
        let version = try setup.test.store.prepareEntry(
            forKey: key, length: data.count, options: WriteOptions(metadata: EntryMetadata(etag: "\"v1\""))
        ).version
        try setup.test.store.write(data[0..<chunk], at: 0, forKey: key, version: version)
        let (queue, _) = try await setup.open(progressInterval: .milliseconds(20))
        let record = try await queue.enqueue(url)
        let identifier = TransferIdentifier(download: record.id, offset: chunk).description
        #expect(try await eventually { setup.service.running == [identifier] })
        setup.service.state.withLock { $0.received[identifier] = 5000 }
        #expect(try await eventually { await queue.download(record.id)?.bytesStored == chunk + 5000 })
        #expect(await queue.download(record.id)?.totalBytes == data.count)
        // More than the range: capped at the length.
        setup.service.state.withLock { $0.received[identifier] = 10 * data.count }
        #expect(try await eventually { await queue.download(record.id)?.bytesStored == data.count })
        #expect(await queue.download(record.id)?.status == .downloading)
        setup.service.finish(identifier)
        try await queue.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: key) == data)
    }

    @Test("Ranges the store holds are not fetched again: the task asks for the first hole only")
    func storedRangesSkipped() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        setup.service.state.withLock { $0.autoFinish = true }
        let chunk = TestCache.chunkSize
        let store = setup.test.store!
        let key = setup.test.cache.cacheKey(for: url)
        let version = try store.prepareEntry(
            forKey: key, length: data.count, options: WriteOptions(metadata: EntryMetadata(etag: "\"v1\""))
        ).version
        try store.write(data[0..<(2 * chunk)], at: 0, forKey: key, version: version)
        try store.write(data[(4 * chunk)..<data.count], at: 4 * chunk, forKey: key, version: version)
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        try await queue.completion(of: record.id)
        #expect(setup.service.started.map(\.request.range) == [(2 * chunk)..<(4 * chunk)])
        #expect(try store.data(forKey: key) == data)
        #expect(try store.info(forKey: key)?.version == version, "filled into the same entry")
    }

    @Test("Stopped mid-task: the task is cancelled, its resume data saved in the index and used on resume")
    func resumeData() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        let identifier = TransferIdentifier(download: record.id, offset: 0).description
        try await queue.stop(record.id)
        #expect(try await eventually { try storedRecord(record.id, in: setup.test.store)?.resumeData != nil })
        #expect(setup.service.cancelled == [identifier])
        let saved = try #require(try storedRecord(record.id, in: setup.test.store)?.resumeData)
        #expect(saved.identifier == identifier && saved.data == Data("resume \(identifier)".utf8))
        try await queue.resume(record.id)
        #expect(try await eventually { setup.service.running.count == 1 })
        #expect(setup.service.started.last?.resumeData == saved.data)
        setup.service.finish(identifier)
        try await queue.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
        #expect(try await eventually { try storedRecord(record.id, in: setup.test.store)?.resumeData == nil })
    }

    @Test("Killed mid-task and relaunched: the running task is adopted, never started twice")
    func killedAndRelaunched() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        var queue: DownloadQueue? = try await setup.open().0
        let record = try await queue!.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        // The process ends: its queue goes, the service keeps the task.
        setup.service.detach()
        queue = nil
        try await Task.sleep(for: .milliseconds(50))
        #expect(setup.service.running.count == 1 && setup.service.cancelled.isEmpty, "the task outlives the process")
        try await setup.test.relaunch()
        let (relaunched, _) = try await setup.open()
        #expect(try await eventually { await relaunched.download(record.id)?.status == .downloading })
        try await Task.sleep(for: .milliseconds(50))
        #expect(setup.service.started.count == 1, "adopted, not started again")
        setup.service.finish(TransferIdentifier(download: record.id, offset: 0).description)
        try await relaunched.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
    }

    @Test("A task that ended while the app was not running is imported at the next launch")
    func endedWhileNotRunning() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        var queue: DownloadQueue? = try await setup.open().0
        let record = try await queue!.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        setup.service.detach()
        queue = nil
        try await setup.test.relaunch()
        setup.service.finish(TransferIdentifier(download: record.id, offset: 0).description)
        #expect(setup.service.running.isEmpty)
        let (relaunched, _) = try await setup.open()
        try await relaunched.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
        #expect(setup.service.started.count == 1, "nothing fetched again")
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.inboxDirectory.path).isEmpty)
    }

    @Test("A delivery the killed process kept on disk but never imported is imported by the next one")
    func deliveredNotImported() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        var queue: DownloadQueue? = try await setup.open().0
        let connection = try #require(queue?.configuration.backgroundTransfer as? FakeTransferService.Connection)
        let record = try await queue!.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        queue = nil
        try await Task.sleep(for: .milliseconds(50))
        // Delivered to the old process's inbox after its queue went.
        setup.service.finish(TransferIdentifier(download: record.id, offset: 0).description)
        #expect(connection.inbox.pending.count == 1)
        setup.service.detach()
        try await setup.test.relaunch()
        let (relaunched, _) = try await setup.open()
        try await relaunched.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
        #expect(setup.service.started.count == 1)
    }

    @Test("Launch: a duplicate task of a download and one of an unknown download are cancelled")
    func duplicatesCancelled() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        var queue: DownloadQueue? = try await setup.open().0
        let record = try await queue!.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        setup.service.detach()
        queue = nil
        let stray = TransferIdentifier(download: UUID(), offset: 0).description
        let duplicate = TransferIdentifier(download: record.id, offset: TestCache.chunkSize).description
        for identifier in [stray, duplicate] {
            setup.service.run(TransferRequest(identifier: identifier, url: url))
        }
        try await setup.test.relaunch()
        let (relaunched, _) = try await setup.open()
        #expect(try await eventually { Set(setup.service.cancelled) == [stray, duplicate] })
        let first = TransferIdentifier(download: record.id, offset: 0).description
        #expect(setup.service.running == [first])
        setup.service.finish(first)
        try await relaunched.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
    }

    @Test("A short or mislabelled file is reported, removed, and fetched again; too many fail the download")
    func importFailures() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        setup.service.state.withLock {
            $0.autoFinish = true
            $0.faults = [.truncate(100)]
        }
        let failures = Locked<[TransferImportError]>([])
        let (queue, _) = try await setup.open(importFailed: { _, error in failures.withLock { $0.append(error) } })
        let problems = await queue.problems()
        let record = try await queue.enqueue(url)
        try await queue.completion(of: record.id)
        #expect(failures.current == [.sizeMismatch(expected: data.count, actual: data.count - 100)])
        var told: DownloadError?
        for await problem in problems {
            told = problem
            break
        }
        guard case .transfer(let reason) = told else {
            throw QueueTestFailure("no problem told: \(String(describing: told))")
        }
        #expect(reason.contains("\(record.id)") && reason.contains("\(data.count - 100)"))
        #expect(setup.service.started.count == 2)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
        #expect(try FileManager.default.contentsOfDirectory(atPath: setup.service.scratch.path).isEmpty)

        // Every attempt fails: the download fails with the import's error, bytes never stored wrong.
        let other = URL(string: "https://media.example/other.bin")!
        setup.service.publish(data, at: other)
        let chunk = TestCache.chunkSize
        let key = setup.test.cache.cacheKey(for: other)
        let version = try setup.test.store.prepareEntry(
            forKey: key, length: data.count, options: WriteOptions(metadata: EntryMetadata(etag: "\"v1\""))
        ).version
        try setup.test.store.write(data[0..<chunk], at: 0, forKey: key, version: version)
        setup.service.state.withLock { $0.faults = [.wrongContentRange, .truncate(1), .wrongContentRange] }
        let failing = try await queue.enqueue(other)
        await #expect(throws: DownloadError.self) { try await queue.completion(of: failing.id) }
        #expect(failures.current.count == 4)
        #expect(try setup.test.store.cachedRanges(forKey: key) == [0..<chunk])
    }

    @Test("A failed task is started again from its resume data, after the retry policy's wait, and completes")
    func failedTaskRetried() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        let identifier = TransferIdentifier(download: record.id, offset: 0).description
        #expect(try await eventually { setup.service.running == [identifier] })
        let partial = Data("partial \(identifier)".utf8)
        setup.service.fail(identifier, resumeData: partial)
        #expect(try await eventually { setup.service.started.count == 2 && setup.service.running == [identifier] })
        #expect(setup.service.started.map(\.resumeData) == [nil, partial], "the second start resumes the first")
        #expect(await queue.download(record.id)?.status == .downloading)
        // Another failure in a row, then an end: the count is per run of failures in a row.
        setup.service.fail(identifier, resumeData: nil)
        #expect(try await eventually { setup.service.started.count == 3 && setup.service.running == [identifier] })
        setup.service.finish(identifier)
        try await queue.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
        #expect(try await eventually { try storedRecord(record.id, in: setup.test.store)?.resumeData == nil })
    }

    @Test("Failures in a row beyond the retry policy's retries fail the download with the transfer's reason")
    func failedTaskRetriesBounded() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        let identifier = TransferIdentifier(download: record.id, offset: 0).description
        let retries = setup.test.cache.configuration.retryPolicy.maxRetries
        #expect(retries >= 1)
        for attempt in 1...(retries + 1) {
            #expect(try await eventually { setup.service.started.count == attempt && setup.service.running.count == 1 })
            setup.service.fail(identifier, resumeData: nil)
        }
        await #expect(throws: DownloadError.self) { try await queue.completion(of: record.id) }
        #expect(setup.service.started.count == retries + 1, "never more than the policy allows")
        guard case .failed(.transfer(let reason)) = await queue.download(record.id)?.status else {
            Issue.record("not failed with a transfer error")
            return
        }
        #expect(reason.contains("status"))
    }

    @Test("An origin whose ETag changes at each response fails the download after a bounded number of replacements")
    func changingContent() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        setup.service.state.withLock {
            $0.autoFinish = true
            $0.rotateETags = true
        }
        let chunk = TestCache.chunkSize
        let key = setup.test.cache.cacheKey(for: url)
        let version = try setup.test.store.prepareEntry(
            forKey: key, length: data.count, options: WriteOptions(metadata: EntryMetadata(etag: "\"v1\""))
        ).version
        try setup.test.store.write(data[0..<(2 * chunk)], at: 0, forKey: key, version: version)
        let (queue, _) = try await setup.open()
        let record = try await queue.enqueue(url)
        await #expect(throws: DownloadError.self) { try await queue.completion(of: record.id) }
        let starts = setup.service.started.count
        #expect(starts >= 3 && starts <= 4, "\(starts) tasks: bounded")
        guard case .failed(.transfer(let reason)) = await queue.download(record.id)?.status else {
            Issue.record("not failed with a transfer error")
            return
        }
        #expect(reason.contains("replaced"))
    }

    @Test("The events' completion handler is called once, after the delivered file is imported and committed")
    func eventsHandler() async throws {
        let setup = try Setup()
        setup.service.publish(data, at: url)
        let (queue, connection) = try await setup.open()
        let record = try await queue.enqueue(url)
        let identifier = TransferIdentifier(download: record.id, offset: 0).description
        #expect(try await eventually { connection.inbox.waiting.contains(identifier) })
        #expect(!queue.handleEventsForBackgroundURLSession("another.session") {})
        let store = setup.test.store!
        let calls = Locked<[Bool]>([])
        #expect(
            queue.handleEventsForBackgroundURLSession(setup.service.sessionIdentifier) {
                calls.withLock { $0.append((try? store.info(forKey: record.cacheKey)?.isComplete) == true) }
            })
        setup.service.finish(identifier)
        queue.configuration.backgroundTransfer?.inbox.didFinishEvents()
        try await queue.completion(of: record.id)
        #expect(try await eventually { !calls.current.isEmpty })
        try await Task.sleep(for: .milliseconds(50))
        #expect(calls.current == [true], "called once, the entry complete by then")
    }
}

private struct QueueTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
