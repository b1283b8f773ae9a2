import Foundation
import MediaServer
import MediaStore
import Testing

@testable import MediaStreaming

/// A master playlist the server hands out while a download of it pins
/// its playlists: a pinned master is served as its downloaded selection
/// (the media playlists pinned), so it must not be pinned before them.
@Suite("MediaServer: a master served while its download keeps its playlists", .timeLimit(.minutes(2)))
struct HLSMasterWhileKeepingTests {
    @Test("paused before the English playlist is pinned, the master served still has its audio")
    func keepsTheMasterLast() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(cache: fixture.cache, parallelFetches: 1)
        let english = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/english.m3u8")).storeKey
        let (reached, reachedGate) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        downloader.resources.keepGateForTesting.withLock {
            $0 = { key in
                guard key == english else { return }
                reachedGate.yield()
                for await _ in released { break }
            }
        }
        defer { downloader.resources.keepGateForTesting.withLock { $0 = nil } }
        let download = downloader.download(master, variant: .first, audio: .languages(["en"]))
        for await _ in reached { break }

        let local = fixture.server.hlsURL(for: master)
        let during = String(decoding: try await HLSPlaybackTests.get(local).body, as: UTF8.self)
        #expect(during.contains("TYPE=AUDIO") && during.contains("LANGUAGE=\"en\""), "\(during)")

        release.yield()
        try await download.completion()
        // Kept: the downloaded selection, English audio and no French.
        let after = String(decoding: try await HLSPlaybackTests.get(local).body, as: UTF8.self)
        #expect(after.contains("LANGUAGE=\"en\"") && !after.contains("LANGUAGE=\"fr\""), "\(after)")
    }
}
