import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// An offline download paused and resumed: the first run, stopped, ends
/// after the second one started. Its result must not be applied.
@Suite("Offline download runs", .timeLimit(.minutes(1)))
struct OfflineRunTests {
    static let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    static let url = URL(string: "https://example.invalid/offline-runs")!

    /// A download of ``url`` started (as an ``OfflineDownloader`` would,
    /// but with the gates in place first) that holds its first run's result
    /// at `first` and the second's at `second`; ``OfflineDownload/resume()``
    /// starts it again.
    static func started(in test: TestCache, first: AsyncGate, second: AsyncGate) -> OfflineDownload {
        let box = WeakDownload()
        let hooks = DownloadRunHooks()
        hooks.result.withLock { $0 = AsyncGate.firstThenSecond(first, second) }
        let download = OfflineDownload(loader: test.cache.loader(for: url), hooks: hooks) { box.download?.start() }
        box.download = download
        download.start()
        return download
    }

    /// The download its own callback starts again.
    private final class WeakDownload: @unchecked Sendable {
        weak var download: OfflineDownload?
    }

    /// Pauses the download whose first run is held at its result, resumes
    /// it, and waits until the second run holds its own: returns both tasks.
    static func restart(_ download: OfflineDownload, first: AsyncGate, second: AsyncGate) async throws
        -> (Task<Void, Never>, Task<Void, Never>)
    {
        await first.arrived()
        let runOne = try #require(download.latestRunTask)
        download.pause()
        download.resume()
        await second.arrived()
        let runTwo = try #require(download.latestRunTask)
        #expect(download.state == .downloading)
        return (runOne, runTwo)
    }

    /// Run 1 fetched every byte, then was paused before it said so; run 2
    /// started. Run 1's success used to mark the download completed while
    /// run 2 was still at work.
    @Test("A paused run's late success does not complete the next run")
    func lateSuccessIsNotApplied() async throws {
        let test = try TestCache(origin: MemoryOrigin(Self.content))
        let first = AsyncGate()
        let second = AsyncGate()
        let download = Self.started(in: test, first: first, second: second)
        let (runOne, runTwo) = try await Self.restart(download, first: first, second: second)

        first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's result was applied")
        #expect(download.latestRunTask == runTwo)

        second.open()
        try await download.completion()
        #expect(try test.store.info(forKey: download.cacheKey)?.isPinned == true)
    }

    /// Run 1 failed (the origin answered 404 once), then was paused before
    /// it said so; run 2 started. Run 1's failure used to mark run 2 failed.
    @Test("A paused run's late failure does not fail the next run")
    func lateFailureIsNotApplied() async throws {
        let origin = FaultOrigin(MemoryOrigin(Self.content), fault: .status(404), times: 1)
        let test = try TestCache(origin: origin)
        let first = AsyncGate()
        let second = AsyncGate()
        let download = Self.started(in: test, first: first, second: second)
        let (runOne, _) = try await Self.restart(download, first: first, second: second)

        first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's failure was applied")

        second.open()
        try await download.completion()
        #expect(download.snapshot.bytes == Self.content.count)
        #expect(origin.injected == 1)
    }
}
