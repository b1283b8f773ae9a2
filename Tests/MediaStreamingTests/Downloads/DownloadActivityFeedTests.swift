import Foundation
import MediaDownloads
import MediaStreaming
import MediaSupport
import Testing

/// The activity fed from a real DownloadQueue (DownloadActivityFeed), with
/// a performer that fetches nothing: each run reports half its bytes, then
/// ends as the test says, or when cancelled.
@Suite("Download activity feed", .timeLimit(.minutes(1)))
struct DownloadActivityFeedTests {
    /// Runs until the test gives its cache key an outcome, or until cancelled.
    struct HeldPerformer: DownloadPerformer {
        let kind = "held"
        let outcomes = Locked<[String: DownloadError?]>([:])

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            context.report(bytes: 50, total: 100)
            while !Task.isCancelled {
                if let outcome = outcomes.withLock({ $0[record.cacheKey] }) {
                    if let failure = outcome { throw failure }
                    return []
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
            throw .cancelled
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }

        /// Ends `key`'s run: completed when `failure` is `nil`.
        func end(_ key: String, failing failure: DownloadError? = nil) {
            outcomes.withLock { $0[key] = .some(failure) }
        }
    }

    let performer = HeldPerformer()

    func openQueue(_ test: TestCache) async throws -> DownloadQueue {
        try await DownloadQueue.open(
            cache: test.cache,
            configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 3, pollInterval: .milliseconds(20)),
            performers: [performer])
    }

    func enqueue(_ queue: DownloadQueue, _ key: String, discretionary: Bool = false) async throws -> DownloadRecord {
        try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: performer.kind,
            conditions: DownloadConditions(isDiscretionary: discretionary))
    }

    /// The changes until one matches `done` (that one included).
    func collect(
        _ iterator: inout AsyncStream<DownloadActivityChange>.Iterator, until done: (DownloadActivityChange) -> Bool
    ) async -> [DownloadActivityChange] {
        var seen: [DownloadActivityChange] = []
        while let change = await iterator.next() {
            seen.append(change)
            if done(change) { break }
        }
        return seen
    }

    @Test("Two downloads: start with the first's title, a count and their progress, end failed once both ended")
    func startUpdatesAndFailedEnd() async throws {
        let test = try TestCache()
        let queue = try await openQueue(test)
        let start = Date(timeIntervalSince1970: 5_000)
        let feed = DownloadActivityFeed(queue: queue, now: { start }, refreshInterval: .milliseconds(20)) {
            "Title \($0.cacheKey)"
        }
        var changes = await feed.changes().makeAsyncIterator()
        _ = try await enqueue(queue, "a")
        let first = await changes.next()
        #expect(first == .start(first!.state))
        #expect(first?.state.title == "Title a")
        #expect(first?.state.started == start)
        _ = try await enqueue(queue, "b")
        // Both run and report half their bytes.
        let running = await collect(&changes) { $0.state.inFlight == 2 && $0.state.fractionCompleted == 0.5 }
        #expect(running.allSatisfy { $0 == .update($0.state) })
        #expect(running.last?.state.title == nil)
        performer.end("a")
        performer.end("b", failing: .transfer("reset"))
        let rest = await collect(&changes) { $0 == .end($0.state) }
        let end = try #require(rest.last)
        #expect(end == .end(end.state))
        #expect(end.state.phase == .failed)
        #expect(end.state.completed == 1)
        #expect(end.state.failed == 1)
    }

    /// Reports what the HLS performer reports: resources of a plan, and
    /// bytes without a total (an HLS asset's length is never known ahead).
    struct ResourcePerformer: DownloadPerformer {
        let kind = "resources"

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            context.report { progress in
                progress.totalResources = 4
                progress.resources = 1
                progress.bytes = 300_000
            }
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            throw .cancelled
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
    }

    @Test("A download that counts resources (HLS) shows its fraction in the activity, not 0 until it ends")
    func resourceCountedDownloadShowsItsFraction() async throws {
        let test = try TestCache()
        let resources = ResourcePerformer()
        let queue = try await DownloadQueue.open(
            cache: test.cache,
            configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 3, pollInterval: .milliseconds(20)),
            performers: [resources])
        let feed = DownloadActivityFeed(queue: queue, refreshInterval: .milliseconds(20)) { _ in "Asset" }
        let changes = await feed.changes()
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/master.m3u8")!, cacheKey: "master", kind: resources.kind)
        // The fraction its progress gives (1 of 4 resources), within a few refreshes.
        let watcher = Task {
            var iterator = changes.makeAsyncIterator()
            var last: Double?
            while let change = await iterator.next() {
                last = change.state.fractionCompleted
                if last == 0.25 { break }
            }
            return last
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(5))
            watcher.cancel()
        }
        let fraction = await watcher.value
        timeout.cancel()
        #expect(fraction == 0.25, "the activity showed \(String(describing: fraction)) for 1 of 4 resources")
        try await queue.cancel(record.id)
    }

    @Test(
        "Cancel-all cancels every non-discretionary download in flight through the queue; each fails as the user cancelled"
    )
    func cancelAll() async throws {
        let test = try TestCache()
        let queue = try await openQueue(test)
        let feed = DownloadActivityFeed(queue: queue)
        // Nothing in flight: nothing to cancel.
        #expect(await feed.cancelAll().isEmpty)
        let a = try await enqueue(queue, "a")
        let b = try await enqueue(queue, "b")
        let background = try await enqueue(queue, "c", discretionary: true)
        // Queued before the feed listened: its first change starts the activity with both.
        var changes = await feed.changes().makeAsyncIterator()
        let first = await changes.next()
        #expect(first == .start(first!.state))
        #expect(first?.state.inFlight == 2)
        let results = await feed.cancelAll()
        #expect(Set(results.keys) == [a.id, b.id])
        #expect(results.values.allSatisfy { (try? $0.get()) != nil })
        let end = try #require(await collect(&changes) { $0 == .end($0.state) }.last)
        #expect(end.state.phase == .cancelled)
        #expect(end.state.cancelled == 2)
        for id in [a.id, b.id] {
            await #expect(throws: DownloadError.cancelled) { try await queue.completion(of: id) }
        }
        #expect(DownloadError.cancelled.cocoaError.domain == NSCocoaErrorDomain)
        // The discretionary one goes on.
        #expect(await queue.download(background.id)?.status.isActive == true)
        try await queue.cancel(background.id)
    }

    @Test(
        "Cancel-all saves the index once for all its downloads and cancels the queue's progress, as the queue's cancelAll"
    )
    func cancelAllSavesOnce() async throws {
        let test = try TestCache()
        let saves = Locked(0)
        var configuration = DownloadQueueConfiguration(maxConcurrentDownloads: 2, pollInterval: .seconds(60))
        configuration.indexSaveHook = { saves.withLock { $0 += 1 } }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [performer])
        let feed = DownloadActivityFeed(queue: queue)
        let count = 12
        var ids: Set<UUID> = []
        for index in 0..<count { ids.insert(try await enqueue(queue, "k\(index)").id) }
        #expect(!queue.progress.isCancelled)
        let before = saves.current
        let results = await feed.cancelAll()
        let during = saves.current - before
        #expect(Set(results.keys) == ids)
        #expect(results.values.allSatisfy { (try? $0.get()) != nil })
        // One save for the cancels; a run that ended in between may add its own.
        #expect(during < count / 2, "\(during) saves for \(count) cancels")
        #expect(queue.progress.isCancelled)
        for id in ids { #expect(await queue.download(id)?.status == .failed(.cancelled)) }
    }
}
