import Foundation
import MediaStreaming
import Testing

@testable import MediaServer

/// `hlsURL(for:)` of a downloaded asset rewrites its playlists in the
/// background before the player asks (the first start does not pay for
/// rewriting hundreds of segment lines); an asset that is not kept is left
/// alone and nothing is fetched for it.
@Suite("MediaServer prepares a kept asset's playlists", .serialized, .timeLimit(.minutes(3)))
struct HLSPreparationTests {
    /// Waits up to 10 s for `condition`.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<200 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return condition()
    }

    @Test func aKeptAssetsPlaylistsAreRewrittenBeforeAnyRequest() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        try await HLSDownloader(cache: fixture.cache).download(
            master, variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .none
        ).completion()
        fixture.nginx.stop()
        let before = fixture.origin.requests
        #expect(fixture.server.hlsRewrites.withLock { $0.isEmpty })
        let local = fixture.server.hlsURL(for: master)
        // The master, the kept variant's media playlist and the English audio's.
        #expect(try await Self.eventually { fixture.server.hlsRewrites.withLock { $0.count } == 3 })
        let prepared = fixture.server.hlsRewrites.withLock { $0 }
        #expect(prepared.keys.contains(local.path))
        // What the player then gets is the prepared rewrite, byte for byte.
        let served = try await HLSPlaybackTests.get(local)
        #expect(served.status == 200 && served.body == prepared[local.path]?.output)
        // Each media playlist the served master lists was among the prepared ones.
        let mediaTargets = MediaServer.localTargets(in: served.body).filter { target in
            guard case .hls(let route) = ServerRoute.resolve(target, secret: fixture.server.secret) else {
                return false
            }
            return route.kind == .mediaPlaylist
        }
        #expect(mediaTargets.count == 2)
        for target in mediaTargets { #expect(prepared[target] != nil, "\(target) was not prepared") }
        #expect(fixture.origin.requests == before, "no origin request")
    }

    @Test func anAssetNotKeptIsLeftAlone() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let before = fixture.origin.requests
        _ = fixture.server.hlsURL(for: master)
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.server.hlsRewrites.withLock { $0.isEmpty })
        #expect(fixture.origin.requests == before, "nothing fetched for an asset that is not kept")
    }

    @Test func localTargetsAreURILinesAndURIAttributes() {
        let playlist = Data(
            """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="http://127.0.0.1:9/s/h/QQ/ma/a.m3u8"
            #EXT-X-KEY:METHOD=AES-128,URI="http://127.0.0.1:9/s/h/QQ/k/key",IV=0x1
            #EXT-X-STREAM-INF:BANDWIDTH=1
            http://127.0.0.1:9/s/h/QQ/m/v.m3u8
            skd://not-local
            """.utf8)
        #expect(
            MediaServer.localTargets(in: playlist) == ["/s/h/QQ/ma/a.m3u8", "/s/h/QQ/k/key", "/s/h/QQ/m/v.m3u8"])
    }
}
