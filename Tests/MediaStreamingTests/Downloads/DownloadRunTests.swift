import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// The download engine's runs, for each performer: a progressive file
/// (from memory) and an HLS asset (from a real nginx). Each download's
/// first run is held at its result at `first` (every byte stored), later
/// runs at `second`; a stopped run's late result must not be applied, and
/// two of `pause()`, `resume()` and `cancel()` at once (one held inside
/// the call, at its transition hook) must act on each other's outcome.
@Suite("Download engine runs", .serialized, .timeLimit(.minutes(1)))
struct DownloadRunTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case progressive, hls
        var testDescription: String { rawValue }
    }

    static let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
    static let url = URL(string: "https://example.invalid/offline-runs")!

    /// A download under test, with what it needs kept alive.
    struct Started {
        let test: TestCache
        let download: MediaDownload
        let origin: HLSOrigin?
    }

    /// A download of `kind` started with the gates in place (the first
    /// origin request answering 404 when `failingOnce`); a resume starts
    /// it again at once.
    static func started(_ kind: Kind, failingOnce: Bool = false, first: AsyncGate, second: AsyncGate) throws
        -> Started
    {
        let hooks = DownloadRunHooks()
        hooks.result.withLock { $0 = AsyncGate.firstThenSecond(first, second) }
        switch kind {
        case .progressive:
            let test = try TestCache(
                origin: FakeOrigin(serving: content, fault: failingOnce ? .status(404) : nil, times: 1))
            let box = WeakDownload()
            let key = test.cache.cacheKey(for: url)
            let download = MediaDownload(
                record: DownloadRecord(url: url, cacheKey: key, queueOrder: 0), key: key,
                holder: OfflineDownloader.holder(ofKey: key), performer: ProgressiveDownloadPerformer(),
                cache: test.cache, hooks: hooks
            ) { box.download?.start() }
            box.download = download
            download.start()
            return Started(test: test, download: download, origin: nil)
        case .hls:
            let origin = try HLSOrigin()
            let test = try TestCache(origin: FakeOrigin(fault: failingOnce ? .status(404) : nil, times: 1))
            let download = HLSDownloader(cache: test.cache, parallelFetches: 2).download(
                origin.url("master/master.m3u8"), variant: .lowestBandwidth, audio: .languages(["en"]),
                subtitles: .none, headers: [:], priority: .download, hooks: hooks)
            return Started(test: test, download: download, origin: origin)
        }
    }

    /// The download its own callback starts again.
    private final class WeakDownload: @unchecked Sendable {
        weak var download: MediaDownload?
    }

    /// Pauses the download whose first run is held at its result, resumes
    /// it, and waits until the second run holds its own: returns both tasks.
    static func restart(_ download: MediaDownload, first: AsyncGate, second: AsyncGate) async throws
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

    /// Whether the download's entry is held by the download.
    static func isHeld(_ started: Started) throws -> Bool {
        try started.test.store.holders(of: started.download.key).contains(started.download.holder)
    }

    @Test("A paused run's late success does not complete the next run", arguments: Kind.allCases)
    func lateSuccessIsNotApplied(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let (runOne, runTwo) = try await Self.restart(download, first: first, second: second)
        let before = download.snapshot

        first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's result was applied")
        #expect(download.latestRunTask == runTwo)
        #expect(download.snapshot == before)

        second.open()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
        #expect(try Self.isHeld(started))
    }

    @Test("A paused run's late failure does not fail the next run", arguments: Kind.allCases)
    func lateFailureIsNotApplied(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, failingOnce: true, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let (runOne, _) = try await Self.restart(download, first: first, second: second)

        first.open()
        await runOne.value
        #expect(started.test.origin.injected == 1, "the first run's request did not fail")
        #expect(download.state == .downloading, "the stopped run's failure was applied")

        second.open()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
    }

    @Test("A pause racing a cancel leaves it cancelled; resume then does nothing", arguments: Kind.allCases)
    func pauseRacingCancel(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.cancel()
        }
        #expect(download.state == .cancelled, "the pause overwrote the cancel")
        download.resume()
        #expect(download.state == .cancelled)
        #expect(download.latestRun == 1, "a cancelled download was started again")
        #expect(download.latestRunTask == nil)
        first.open()
        second.open()
        await #expect(throws: DownloadError.cancelled) { try await download.completion() }
    }

    @Test("A resume racing a cancel leaves it cancelled, with no run started", arguments: Kind.allCases)
    func resumeRacingCancel(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        download.pause()
        await BlockingGate.hold(download.resume, at: download.hooks.transition) {
            download.cancel()
        }
        #expect(download.state == .cancelled, "the resume overwrote the cancel")
        #expect(download.latestRun == 1, "a cancelled download was started again")
        #expect(download.latestRunTask == nil)
        first.open()
        second.open()
        await #expect(throws: DownloadError.cancelled) { try await download.completion() }
    }

    @Test("A cancel racing a resume leaves it cancelled, with no run going on", arguments: Kind.allCases)
    func cancelRacingResume(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        download.pause()
        await BlockingGate.hold(download.cancel, at: download.hooks.transition) {
            download.resume()
        }
        #expect(download.state == .cancelled)
        #expect(download.latestRunTask == nil, "a run goes on after the cancel")
        first.open()
        second.open()
        await #expect(throws: DownloadError.cancelled) { try await download.completion() }
    }

    @Test("Two resumes at once start one run", arguments: Kind.allCases)
    func twoResumesStartOneRun(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        download.pause()
        await BlockingGate.hold(download.resume, at: download.hooks.transition) {
            download.resume()
        }
        #expect(download.latestRun == 2, "two runs started")
        #expect(download.state == .downloading)
        first.open()
        second.open()
        try await download.completion()
        #expect(try Self.isHeld(started))
    }

    @Test("A resume racing a pause: the resumed run goes on, and the state says so", arguments: Kind.allCases)
    func resumeRacingPause(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        let runTwo = try await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.pause()
            download.resume()
            return try #require(download.latestRunTask)
        }
        #expect(download.latestRunTask == runTwo && !runTwo.isCancelled)
        try #require(download.state == .downloading, "paused while run 2 goes on")
        first.open()
        second.open()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
    }

    @Test("Observers never hear a state older than one they heard", arguments: Kind.allCases)
    func observersHearTheLatestState(kind: Kind) async throws {
        let (first, second) = (AsyncGate(), AsyncGate())
        let started = try Self.started(kind, first: first, second: second)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await first.arrived()
        let updates = download.progressUpdates()
        let heard = Task { () -> [MediaDownload.State] in
            var states: [MediaDownload.State] = []
            for await update in updates { states.append(update.state) }
            return states
        }
        await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.resume()
            await second.arrived()
        }
        download.cancel()
        let states = await heard.value
        #expect(states.last == .cancelled)
        #expect(states.dropLast().last == .downloading, "heard \(states)")
        first.open()
        second.open()
    }
}
