import Foundation
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStore
@testable import MediaStreaming

/// An HLS download paused and resumed (against a real nginx): what each
/// run counts as fetched. The engine's run tests (`DownloadRunTests`) cover
/// the rest for every performer.
@Suite("HLS download runs: what a run fetched", .serialized, .timeLimit(.minutes(1)))
struct HLSDownloadRunTests {
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
        let hooks = DownloadRunHooks()
        hooks.result.withLock { $0 = AsyncGate.firstThenSecond(first, second) }
        let resources = HLSResourceStore(cache: test.cache)
        let download = HLSDownloader(resources: resources, parallelFetches: 2).download(
            origin.url("master/master.m3u8"), variant: .lowestBandwidth, audio: .languages(["en"]),
            subtitles: .none, headers: [:], priority: .download, hooks: hooks)
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

    /// The holds a completed download takes on every entry it kept are one
    /// store commit (they were one commit per entry), made before the
    /// download is reported completed.
    @Test("A completed download's holds are one store commit, made before it reports completed")
    func completionHoldsAreOneCommit() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let store = try #require(test.store)
        let hooks = DownloadRunHooks()
        let atHold = Locked<Int?>(nil)
        hooks.hold.withLock { $0 = { atHold.withLock { $0 = store.environment.lastTransactionID } } }
        let resources = HLSResourceStore(cache: test.cache)
        let download = HLSDownloader(resources: resources, parallelFetches: 2).download(
            origin.url("master/master.m3u8"), variant: .lowestBandwidth, audio: .languages(["en"]),
            subtitles: .none, headers: [:], priority: .download, hooks: hooks)
        try await download.completion()
        let before = try #require(atHold.current)
        #expect(store.environment.lastTransactionID - before == 1)
        let entries = try HLSDownloader(resources: resources).entries(of: origin.url("master/master.m3u8"))
        #expect(entries.count == download.snapshot.totalResources && entries.count > 2)
        let holder = HLSDownloader.holder(
            ofAsset: resources.resourceKey(for: origin.url("master/master.m3u8")).storeKey)
        for entry in entries { #expect(try store.holders(of: entry.key).contains(holder)) }
    }

    /// A segment whose body is in gives its fetch's place to the next one
    /// while it waits to be published: with one fetch at once, the second
    /// segment is fetched while the first is held before its publish.
    @Test("While a segment waits to be published, the next one is fetched")
    func nextSegmentIsFetchedWhileOneWaitsForItsCommit() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let gate = AsyncGate()
        let segments = Locked<[String]>([])
        test.configuration.resourceStoreHooks.keep.withLock {
            $0 = { key in
                guard key.contains(".ts") else { return }
                let first = segments.withLock { list -> Bool in
                    list.append(key)
                    return list.count == 1
                }
                if first { await gate.pass() }
            }
        }
        defer { test.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        let resources = HLSResourceStore(cache: test.cache)
        let download = HLSDownloader(resources: resources, parallelFetches: 1).download(
            origin.url("master/master.m3u8"), variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .none,
            headers: [:], priority: .download, hooks: DownloadRunHooks())
        await gate.arrived()
        let deadline = ContinuousClock.now + .seconds(10)
        while segments.current.count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(segments.current.count >= 2, "the next segment was not fetched while the first waited")
        // Counted only once published: the held one is not.
        #expect(download.snapshot.segments < segments.current.count)
        gate.open()
        try await download.completion()
        #expect(download.snapshot.segments == download.snapshot.totalSegments)
        #expect(Set(segments.current).count == download.snapshot.totalSegments)
    }
}
