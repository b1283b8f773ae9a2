import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// Two of ``HLSDownload/pause()``, ``HLSDownload/resume()`` and
/// ``HLSDownload/cancel()`` at once (against a real nginx): one is held
/// inside the call (its transition hook) while the others run. Pause and
/// cancel used to check the state, stop the task and write the state in
/// separate steps, so the held one acted on a state that was gone.
@Suite("HLS download transitions", .serialized, .timeLimit(.minutes(1)))
struct HLSDownloadTransitionTests {
    /// A download whose first run is held at its result at `first` (every
    /// resource stored), and later runs at `second`.
    static func started(_ origin: HLSOrigin, in test: TestCache, first: AsyncGate, second: AsyncGate) async
        -> HLSDownload
    {
        let download = HLSDownloadRunTests.started(origin, in: test, first: first, second: second)
        await first.arrived()
        return download
    }

    /// A pause held inside the call, a cancel meanwhile: the pause used to
    /// write `paused` over `cancelled`, and a resume then started the
    /// cancelled download again.
    @Test("A pause racing a cancel leaves it cancelled; resume then does nothing")
    func pauseRacingCancel() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(origin, in: test, first: first, second: second)
        await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.cancel()
        }
        #expect(download.state == .cancelled, "the pause overwrote the cancel")
        download.resume()
        #expect(download.state == .cancelled)
        #expect(download.latestRunTask == nil, "a cancelled download was started again")
        first.open()
        second.open()
        await #expect(throws: HLSDownloadError.streaming(.cancelled)) { try await download.completion() }
    }

    /// A pause held inside the call; meanwhile another pause and a resume
    /// (run 2). The held pause used to write `paused` once run 2 was
    /// going: the download said paused while it fetched (and its
    /// completion was never applied).
    @Test("A resume racing a pause: the resumed run goes on, and the state says so")
    func resumeRacingPause() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(origin, in: test, first: first, second: second)
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
        #expect(download.snapshot.resources == download.snapshot.totalResources)
    }

    /// A cancel of a paused download held inside the call, a resume
    /// meanwhile: the resume used to start run 2, which went on fetching
    /// and pinning after the cancel was written.
    @Test("A cancel racing a resume leaves it cancelled, with no run going on")
    func cancelRacingResume() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(origin, in: test, first: first, second: second)
        download.pause()
        await BlockingGate.hold(download.cancel, at: download.hooks.transition) {
            download.resume()
        }
        #expect(download.state == .cancelled)
        #expect(download.latestRunTask == nil, "a run goes on after the cancel")
        first.open()
        second.open()
        await #expect(throws: HLSDownloadError.streaming(.cancelled)) { try await download.completion() }
    }

    /// A pause held after its change; meanwhile a resume started run 2,
    /// which read the playlists and found every resource stored. The pause
    /// then told observers `paused`, after run 2's `downloading`: their
    /// last word was paused while run 2 went on.
    @Test("Observers never hear a state older than one they heard")
    func observersHearTheLatestState() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(origin, in: test, first: first, second: second)
        let updates = download.progressUpdates()
        let heard = Task { () -> [HLSDownload.State] in
            var states: [HLSDownload.State] = []
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
