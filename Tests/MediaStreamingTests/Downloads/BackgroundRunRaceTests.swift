import Foundation
import HLSPlaylist
import MediaHLS
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

@testable import MediaDownloads

/// A service whose cancel takes time, as URLSession's does (two task
/// listings, then the resume data's callback): the window in which a
/// stopped run is still cancelling the task of a name the next run uses.
struct SlowCancelTransfer: BackgroundTransfer {
    let base: FakeTransferService.Connection
    let delay: Duration
    var sessionIdentifier: String { base.sessionIdentifier }
    var inbox: TransferInbox { base.inbox }

    func start(_ request: TransferRequest, resumeData: Data?) async throws(DownloadError) -> TransferTaskHandle {
        try await base.start(request, resumeData: resumeData)
    }

    func cancel(_ task: TransferTaskHandle) async -> Data? {
        let delay = delay
        // Not cut short by the caller's cancellation (a stopped run cancels from a cancelled task).
        await Task { try? await Task.sleep(for: delay) }.value
        return await base.cancel(task)
    }

    func tasks() async -> [TransferTaskInfo] { await base.tasks() }
}

/// Runs of one download through a ``BackgroundTransfer`` stopped and
/// resumed quickly, and tasks of one name twice at a relaunch: no run
/// overlaps another, none waits for a task that is being cancelled, the
/// resumed run uses what the stopped one kept, and no task is left over.
@Suite("Background runs: stop, resume and duplicate tasks", .timeLimit(.minutes(1)))
struct BackgroundRunRaceTests {
    let url = URL(string: "https://media.example/track.bin")!
    let data = Data((0..<(5 * TestCache.chunkSize + 1234)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func open(_ setup: BackgroundTransferQueueTests.Setup, cancelDelay: Duration) async throws -> DownloadQueue {
        let connection = setup.service.connect(inbox: try TransferInbox(directory: setup.inboxDirectory))
        var configuration = DownloadQueueConfiguration()
        configuration.backgroundTransfer = SlowCancelTransfer(base: connection, delay: cancelDelay)
        return try await DownloadQueue.open(cache: setup.test.cache, configuration: configuration)
    }

    @Test("A third run waits for the first too when the second was stopped while it waited")
    func thirdRunWaitsForFirst() async throws {
        let test = try TestCache()
        let gate = AsyncGate()
        let performer = DownloadRunEdgeTests.HeldFirstRunPerformer(gate: gate)
        let runner = DownloadRunner(
            record: DownloadRecord(url: URL(string: "https://example.invalid/a")!, cacheKey: "a", queueOrder: 0),
            holder: "test/a")
        #expect(runner.start(performer: performer, cache: test.cache, afterPrevious: true) { _ in })
        await gate.arrived()
        try runner.apply(.stop(.user))
        try runner.apply(.resume)
        #expect(runner.start(performer: performer, cache: test.cache, afterPrevious: true) { _ in })
        let second = try #require(runner.latestRunTask)
        try runner.apply(.stop(.user))
        await second.value
        try runner.apply(.resume)
        #expect(runner.start(performer: performer, cache: test.cache, afterPrevious: true) { _ in })
        try await Task.sleep(for: .milliseconds(300))
        #expect(performer.calls.current == 1, "the third run performed while the first was still held")
        gate.open()
        #expect(try await eventually { performer.calls.current == 2 }, "the third run performs once the first ended")
    }

    @Test("Stopped and resumed twice while a cancel is slow: a task runs, the download completes")
    func fastStopResumeTwice() async throws {
        let setup = try BackgroundTransferQueueTests.Setup()
        setup.service.publish(data, at: url)
        let queue = try await open(setup, cancelDelay: .seconds(1))
        let record = try await queue.enqueue(url)
        let name = TransferIdentifier(download: record.id, offset: 0).description
        #expect(try await eventually { setup.service.running == [name] })
        try await queue.stop(record.id)
        try await queue.resume(record.id)
        try await queue.stop(record.id)
        try await queue.resume(record.id)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(await queue.download(record.id)?.status == .downloading)
        #expect(try await eventually { setup.service.running == [name] }, "no task runs")
        setup.service.finish(name)
        try await queue.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
    }

    @Test("Resumed while the stopped run still cancels: the new run starts from the resume data it kept")
    func resumeUsesStoppedRunsResumeData() async throws {
        let setup = try BackgroundTransferQueueTests.Setup()
        setup.service.publish(data, at: url)
        let queue = try await open(setup, cancelDelay: .milliseconds(500))
        let record = try await queue.enqueue(url)
        let name = TransferIdentifier(download: record.id, offset: 0).description
        #expect(try await eventually { setup.service.running == [name] })
        try await queue.stop(record.id)
        try await queue.resume(record.id)
        #expect(try await eventually { setup.service.started.count == 2 })
        #expect(setup.service.started.last?.resumeData == Data("resume \(name)".utf8))
        setup.service.finish(name)
        try await queue.completion(of: record.id)
        #expect(
            try await eventually {
                try DownloadIndex(store: setup.test.store).load().first { $0.id == record.id }?.resumeData == nil
            }, "the used resume data is not kept once the range is in")
    }

    @Test("A relaunch finds two tasks of one name: one is kept and adopted, the other cancelled")
    func launchDuplicateName() async throws {
        let setup = try BackgroundTransferQueueTests.Setup()
        setup.service.publish(data, at: url)
        var queue: DownloadQueue? = try await setup.open().0
        let record = try await queue!.enqueue(url)
        #expect(try await eventually { setup.service.running.count == 1 })
        setup.service.detach()
        queue = nil
        try await Task.sleep(for: .milliseconds(50))
        try await setup.test.relaunch()
        let name = TransferIdentifier(download: record.id, offset: 0).description
        setup.service.run(TransferRequest(identifier: name, url: url))
        let relaunched = try await open(setup, cancelDelay: .milliseconds(300))
        try await Task.sleep(for: .milliseconds(1000))
        #expect(await relaunched.download(record.id)?.status == .downloading)
        #expect(setup.service.running == [name], "cancelled: \(setup.service.cancelled)")
        #expect(setup.service.cancelled == [name], "the duplicate is cancelled")
        setup.service.finish(name)
        try await relaunched.completion(of: record.id)
        #expect(try setup.test.store.data(forKey: record.cacheKey) == data)
    }

    @Test("HLS: a relaunch finds two tasks of one resource: none is left running once the download completed")
    func hlsDuplicateName() async throws {
        let hls = BackgroundHLSQueueTests()
        let setup = try BackgroundHLSQueueTests.Setup()
        var queue: DownloadQueue? = try await setup.open()
        let record = try await queue!.enqueue(hls.master, kind: HLSDownloadPerformer.kind)
        try await hls.finishPlaylists(of: record.id, in: setup, thenRunning: BackgroundHLSQueueTests.resourceCount - 2)
        let segments = setup.service.running
        setup.service.detach()
        queue = nil
        try await Task.sleep(for: .milliseconds(50))
        setup.service.run(try #require(setup.service.started.first { $0.request.identifier == segments[0] }?.request))
        try await setup.test.relaunch()
        let relaunched = try await setup.open()
        #expect(try await eventually { await relaunched.download(record.id)?.status == .downloading })
        try await Task.sleep(for: .milliseconds(200))
        for task in Set(setup.service.running) { setup.service.finish(task) }
        try await relaunched.completion(of: record.id)
        #expect(setup.service.running.isEmpty, "left running for a completed download")
    }
}
