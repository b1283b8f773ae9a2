import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A run's edges: progress it reports once stopped, and holds it could
/// take only in part.
@Suite("Download engine run edges", .timeLimit(.minutes(1)))
struct DownloadRunEdgeTests {
    /// Reports `bytes` once its gate opens (the test pauses the download
    /// before), then ends as stopped.
    struct LateReportPerformer: DownloadPerformer {
        let gate: AsyncGate
        var kind: String { "late-report" }

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            context.report(bytes: 10, total: 1000)
            await gate.pass()
            context.report(bytes: 900, total: 1000)
            throw .cancelled
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
    }

    /// Returns every entry of `entries`: the test names one that is not in
    /// the store after one that is.
    struct EntriesPerformer: DownloadPerformer {
        let entries: [StoredEntry]
        var kind: String { "entries" }

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            entries
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { entries.map(\.key) }
    }

    static func download(_ performer: any DownloadPerformer, key: String, cache: StreamingCache) -> MediaDownload {
        MediaDownload(
            record: DownloadRecord(url: URL(string: "https://example.invalid/\(key)")!, cacheKey: key, queueOrder: 0),
            key: key, holder: "test/\(key)", performer: performer, cache: cache, onChange: {})
    }

    /// Its first run is held by the gate, cancelled or not (as a run
    /// held in an import); every call is counted.
    struct HeldFirstRunPerformer: DownloadPerformer {
        let gate: AsyncGate
        let calls = Locked(0)
        var kind: String { "held-first" }

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call == 1 { await gate.pass() }
            throw .cancelled
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
    }

    @Test(
        "Runs after the previous: the next waits for the stopped one's end, and ends at once when stopped while it waits"
    )
    func runAfterPrevious() async throws {
        let test = try TestCache()
        let gate = AsyncGate()
        let performer = HeldFirstRunPerformer(gate: gate)
        let runner = DownloadRunner(
            record: DownloadRecord(url: URL(string: "https://example.invalid/a")!, cacheKey: "a", queueOrder: 0),
            holder: "test/a")
        #expect(runner.start(performer: performer, cache: test.cache, afterPrevious: true) { _ in })
        await gate.arrived()
        try runner.apply(.stop(.user))
        try runner.apply(.resume)
        #expect(runner.start(performer: performer, cache: test.cache, afterPrevious: true) { _ in })
        let second = try #require(runner.latestRunTask)
        try await Task.sleep(for: .milliseconds(200))
        #expect(performer.calls.current == 1, "the second run began while the first was held")
        // Stopped while it waits: it ends without the first (still held).
        try runner.apply(.stop(.user))
        let ended = Locked(false)
        let watcher = Task {
            await second.value
            ended.withLock { $0 = true }
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !ended.current, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(ended.current, "the stopped second run waited for the held first")
        gate.open()
        await watcher.value
        try await Task.sleep(for: .milliseconds(100))
        #expect(performer.calls.current == 1, "a run stopped before it began performed")
    }

    @Test("A paused run's late progress changes no count")
    func pausedRunReportsNothing() async throws {
        let test = try TestCache()
        let gate = AsyncGate()
        let download = Self.download(LateReportPerformer(gate: gate), key: "late", cache: test.cache)
        download.start()
        await gate.arrived()
        #expect(download.snapshot.bytes == 10)
        let run = try #require(download.latestRunTask)
        download.pause()
        gate.open()
        await run.value
        #expect(download.state == .paused)
        #expect(download.snapshot.bytes == 10, "the stopped run's report was applied")
        #expect(download.progress.completedUnitCount == 10)
    }

    @Test("A hold failing midway leaves none of the run's holds behind")
    func partialHoldIsUndone() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        try store.put(Data(repeating: 1, count: 100), forKey: "held")
        let version = try #require(try store.info(forKey: "held")).version
        let performer = EntriesPerformer(entries: [
            StoredEntry(key: "held", version: version), StoredEntry(key: "absent", version: 1),
        ])
        let download = Self.download(performer, key: "held", cache: test.cache)
        download.start()
        await #expect(throws: DownloadError.store(.entryReplaced(key: "absent", expected: 1, found: nil))) {
            try await download.completion()
        }
        #expect(try store.holders(of: "held").isEmpty, "the first entry stayed held by a failed download")
    }
}
