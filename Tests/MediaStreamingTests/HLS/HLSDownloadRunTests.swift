import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// An HLS download paused and resumed: the first run, stopped, ends after
/// the second one started (against a real nginx). Its result must not be
/// applied.
@Suite("HLS download runs", .serialized, .timeLimit(.minutes(1)))
struct HLSDownloadRunTests {
    /// A download of the fixture master playlist started (as an
    /// ``HLSDownloader`` would, but with the gates in place first) that
    /// holds its first run's result at `first` and the second's at `second`.
    static func started(_ origin: HLSOrigin, in test: TestCache, first: AsyncGate, second: AsyncGate)
        -> HLSDownload
    {
        let hooks = DownloadRunHooks()
        hooks.result.withLock { $0 = AsyncGate.firstThenSecond(first, second) }
        let download = HLSDownload(
            url: origin.url("master/master.m3u8"), resources: HLSResourceStore(cache: test.cache),
            variant: .lowestBandwidth,
            audio: .languages(["en"]), subtitles: .none, headers: [:], parallelFetches: 2, hooks: hooks)
        download.start()
        return download
    }

    /// Pauses the download whose first run is held at its result, resumes
    /// it, and waits until the second run holds its own: returns the first's task.
    static func restart(_ download: HLSDownload, first: AsyncGate, second: AsyncGate) async throws
        -> Task<Void, Never>
    {
        await first.arrived()
        let runOne = try #require(download.latestRunTask)
        download.pause()
        download.resume()
        await second.arrived()
        #expect(download.state == .downloading)
        return runOne
    }

    /// Run 1 stored every resource, then was paused before it said so; run
    /// 2 started. Run 1's success used to mark the download completed (and
    /// end its progress updates) while run 2 was still at work.
    @Test("A paused run's late success does not complete the next run")
    func lateSuccessIsNotApplied() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let first = AsyncGate()
        let second = AsyncGate()
        let download = Self.started(origin, in: test, first: first, second: second)
        let runOne = try await Self.restart(download, first: first, second: second)
        let before = download.snapshot

        first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's result was applied")
        #expect(download.snapshot == before)

        second.open()
        try await download.completion()
        let progress = download.snapshot
        #expect(progress.resources == progress.totalResources && progress.totalResources > 0)
    }

    /// Run 1 failed (the master playlist answered 404 once), then was
    /// paused before it said so; run 2 started. Run 1's failure used to
    /// mark run 2 failed.
    @Test("A paused run's late failure does not fail the next run")
    func lateFailureIsNotApplied() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache(origin: FaultOrigin(HTTPOrigin(timeout: 10), fault: .status(404), times: 1))
        let first = AsyncGate()
        let second = AsyncGate()
        let download = Self.started(origin, in: test, first: first, second: second)
        let runOne = try await Self.restart(download, first: first, second: second)

        first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's failure was applied")

        second.open()
        try await download.completion()
        #expect(download.snapshot.resources == download.snapshot.totalResources)
    }

    /// Run 1 fetched every resource, then was paused before it said so;
    /// run 2 found them all in the store and fetched nothing.
    /// `fetchedResources` (what this run fetched) kept run 1's count: run 2
    /// reported every resource fetched.
    @Test("After a pause and resume, fetchedResources counts only what the new run fetched")
    func resumedRunCountsItsOwnFetches() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let first = AsyncGate()
        let second = AsyncGate()
        let download = Self.started(origin, in: test, first: first, second: second)
        let resources = download.resources
        await first.arrived()
        let runOne = download.snapshot
        #expect(runOne.totalResources > 0 && runOne.fetchedResources == runOne.totalResources)
        let requests = resources.originRequests
        download.pause()
        download.resume()
        await second.arrived()
        let runTwo = download.snapshot
        #expect(resources.originRequests == requests)
        #expect(runTwo.resources == runTwo.totalResources)
        #expect(runTwo.fetchedResources == 0, "run 1's fetches counted again")

        first.open()
        second.open()
        try await download.completion()
        #expect(download.snapshot.fetchedResources == 0)
    }
}
