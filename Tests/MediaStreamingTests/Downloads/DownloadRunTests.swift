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

    /// A download under test, with what it needs kept alive and the gates
    /// its runs' results are held at.
    struct Started {
        let test: TestCache
        let download: MediaDownload
        let origin: HLSOrigin?
        let first: AsyncGate
        let second: AsyncGate

        /// Lets every run's result through.
        func openGates() {
            first.open()
            second.open()
        }
    }

    /// A download of `kind` started with the gates in place (the first
    /// origin request answering 404 when `failingOnce`); a resume starts
    /// it again at once.
    static func started(_ kind: Kind, failingOnce: Bool = false) throws -> Started {
        let (first, second) = (AsyncGate(), AsyncGate())
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
            return Started(test: test, download: download, origin: nil, first: first, second: second)
        case .hls:
            let origin = try HLSOrigin()
            let test = try TestCache(origin: FakeOrigin(fault: failingOnce ? .status(404) : nil, times: 1))
            let download = HLSDownloader(cache: test.cache, parallelFetches: 2).download(
                origin.url("master/master.m3u8"), variant: .lowestBandwidth, audio: .languages(["en"]),
                subtitles: .none, headers: [:], priority: .download, hooks: hooks)
            return Started(test: test, download: download, origin: origin, first: first, second: second)
        }
    }

    /// A download of `kind` whose first run holds at its result (every
    /// byte stored), then paused when `paused`.
    static func held(_ kind: Kind, paused: Bool) async throws -> Started {
        let started = try started(kind)
        await started.first.arrived()
        if paused { started.download.pause() }
        return started
    }

    /// The download its own callback starts again.
    private final class WeakDownload: @unchecked Sendable {
        weak var download: MediaDownload?
    }

    /// Pauses the download whose first run is held at its result, resumes
    /// it, and waits until the second run holds its own: returns both tasks.
    static func restart(_ started: Started) async throws -> (Task<Void, Never>, Task<Void, Never>) {
        let download = started.download
        await started.first.arrived()
        let runOne = try #require(download.latestRunTask)
        download.pause()
        download.resume()
        await started.second.arrived()
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
        let started = try Self.started(kind)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let (runOne, runTwo) = try await Self.restart(started)
        let before = download.snapshot

        started.first.open()
        await runOne.value
        #expect(download.state == .downloading, "the stopped run's result was applied")
        #expect(download.latestRunTask == runTwo)
        #expect(download.snapshot == before)

        started.second.open()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
        #expect(try Self.isHeld(started))
    }

    @Test("A paused run's late failure does not fail the next run", arguments: Kind.allCases)
    func lateFailureIsNotApplied(kind: Kind) async throws {
        let started = try Self.started(kind, failingOnce: true)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let (runOne, _) = try await Self.restart(started)

        started.first.open()
        await runOne.value
        #expect(started.test.origin.injected == 1, "the first run's request did not fail")
        #expect(download.state == .downloading, "the stopped run's failure was applied")

        started.second.open()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
    }

    /// A cancel racing a pause or a resume: one of them held inside the
    /// call (at its transition hook) while the other is made.
    enum CancelRace: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// A pause held, a cancel meanwhile.
        case pauseThenCancel
        /// A paused download's resume held, a cancel meanwhile.
        case resumeThenCancel
        /// A paused download's cancel held, a resume meanwhile.
        case cancelThenResume
        var testDescription: String { rawValue }

        /// Whether the download is paused before the race.
        var pausedFirst: Bool { self != .pauseThenCancel }

        /// Runs the race on `download`.
        func run(on download: MediaDownload) async {
            switch self {
            case .pauseThenCancel:
                await BlockingGate.hold(download.pause, at: download.hooks.transition) { download.cancel() }
            case .resumeThenCancel:
                await BlockingGate.hold(download.resume, at: download.hooks.transition) { download.cancel() }
            case .cancelThenResume:
                await BlockingGate.hold(download.cancel, at: download.hooks.transition) { download.resume() }
            }
        }
    }

    @Test(
        "A cancel racing a pause or a resume leaves it cancelled, with no run going on; resume then does nothing",
        arguments: CancelRace.allCases, Kind.allCases)
    func cancelRacing(_ race: CancelRace, kind: Kind) async throws {
        let started = try await Self.held(kind, paused: race.pausedFirst)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await race.run(on: download)
        #expect(download.state == .cancelled, "the \(race) overwrote the cancel")
        #expect(download.latestRunTask == nil, "a run goes on after the cancel")
        if race != .cancelThenResume {
            #expect(download.latestRun == 1, "a cancelled download was started again")
        }
        let runs = download.latestRun
        download.resume()
        #expect(download.state == .cancelled)
        #expect(download.latestRun == runs, "a resume started a cancelled download again")
        #expect(download.latestRunTask == nil)
        started.openGates()
        await #expect(throws: DownloadError.cancelled) { try await download.completion() }
    }

    @Test("Two resumes at once start one run", arguments: Kind.allCases)
    func twoResumesStartOneRun(kind: Kind) async throws {
        let started = try await Self.held(kind, paused: true)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        await BlockingGate.hold(download.resume, at: download.hooks.transition) {
            download.resume()
        }
        #expect(download.latestRun == 2, "two runs started")
        #expect(download.state == .downloading)
        started.openGates()
        try await download.completion()
        #expect(try Self.isHeld(started))
    }

    @Test("A resume racing a pause: the resumed run goes on, and the state says so", arguments: Kind.allCases)
    func resumeRacingPause(kind: Kind) async throws {
        let started = try await Self.held(kind, paused: false)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let runTwo = try await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.pause()
            download.resume()
            return try #require(download.latestRunTask)
        }
        #expect(download.latestRunTask == runTwo && !runTwo.isCancelled)
        try #require(download.state == .downloading, "paused while run 2 goes on")
        started.openGates()
        try await download.completion()
        #expect(download.snapshot.fraction == 1)
    }

    @Test("Observers never hear a state older than one they heard", arguments: Kind.allCases)
    func observersHearTheLatestState(kind: Kind) async throws {
        let started = try await Self.held(kind, paused: false)
        defer { withExtendedLifetime(started) {} }
        let download = started.download
        let updates = download.progressUpdates()
        let heard = Task { () -> [MediaDownload.State] in
            var states: [MediaDownload.State] = []
            for await update in updates { states.append(update.state) }
            return states
        }
        await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.resume()
            await started.second.arrived()
        }
        download.cancel()
        let states = await heard.value
        #expect(states.last == .cancelled)
        #expect(states.dropLast().last == .downloading, "heard \(states)")
        started.openGates()
    }
}
