import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// Two of ``OfflineDownload/pause()``, ``OfflineDownload/resume()`` and
/// ``OfflineDownload/cancel()`` at once: one is held inside the call (its
/// transition hook) while the other runs. Each used to check the state and
/// change it in two steps, so the held one acted on a state that was gone.
@Suite("Offline download transitions", .timeLimit(.minutes(1)))
struct OfflineTransitionTests {
    /// A download whose first run is held at its result at `first` (every
    /// byte fetched), and later runs at `second`.
    static func started(in test: TestCache, first: AsyncGate, second: AsyncGate) async -> OfflineDownload {
        let download = OfflineRunTests.started(in: test, first: first, second: second)
        await first.arrived()
        return download
    }

    /// A pause held after its check, a cancel meanwhile: the pause used to
    /// write `paused` over `cancelled`, and a resume then started the
    /// cancelled download again.
    @Test("A pause racing a cancel leaves it cancelled; resume then does nothing")
    func pauseRacingCancel() async throws {
        let test = try TestCache(origin: MemoryOrigin(OfflineRunTests.content))
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(in: test, first: first, second: second)
        await BlockingGate.hold(download.pause, at: download.hooks.transition) {
            download.cancel()
        }
        #expect(download.state == .cancelled, "the pause overwrote the cancel")
        download.resume()
        #expect(download.state == .cancelled)
        #expect(download.latestRun == 1, "a cancelled download was started again")
        first.open()
        second.open()
        await #expect(throws: StreamingError.cancelled) { try await download.completion() }
    }

    /// A resume held after its check, a cancel meanwhile: the resume used
    /// to queue the cancelled download, and it was started again.
    @Test("A resume racing a cancel leaves it cancelled, with no run started")
    func resumeRacingCancel() async throws {
        let test = try TestCache(origin: MemoryOrigin(OfflineRunTests.content))
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(in: test, first: first, second: second)
        download.pause()
        await BlockingGate.hold(download.resume, at: download.hooks.transition) {
            download.cancel()
        }
        #expect(download.state == .cancelled, "the resume overwrote the cancel")
        #expect(download.latestRun == 1, "a cancelled download was started again")
        #expect(download.latestRunTask == nil)
        first.open()
        second.open()
        await #expect(throws: StreamingError.cancelled) { try await download.completion() }
    }

    /// Two resumes of a paused download: the held one used to queue it
    /// again after the other had started it, so a second run started (and
    /// the first went on, uncancelled, beside it).
    @Test("Two resumes at once start one run")
    func twoResumesStartOneRun() async throws {
        let test = try TestCache(origin: MemoryOrigin(OfflineRunTests.content))
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(in: test, first: first, second: second)
        download.pause()
        await BlockingGate.hold(download.resume, at: download.hooks.transition) {
            download.resume()
        }
        #expect(download.latestRun == 2, "two runs started")
        #expect(download.state == .downloading)
        first.open()
        second.open()
        try await download.completion()
        #expect(try test.store.info(forKey: download.cacheKey)?.isPinned == true)
    }

    /// A pause held after its change; meanwhile a resume started run 2.
    /// The pause then told observers `paused`, after run 2's
    /// `downloading`: their last word was paused while run 2 went on.
    @Test("Observers never hear a state older than one they heard")
    func observersHearTheLatestState() async throws {
        let test = try TestCache(origin: MemoryOrigin(OfflineRunTests.content))
        let (first, second) = (AsyncGate(), AsyncGate())
        let download = await Self.started(in: test, first: first, second: second)
        let updates = download.progressUpdates()
        let heard = Task { () -> [OfflineDownload.State] in
            var states: [OfflineDownload.State] = []
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
