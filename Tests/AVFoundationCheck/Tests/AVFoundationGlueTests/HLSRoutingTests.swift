@_spi(StandIn) import AVFoundation
import Foundation
import MediaServer
import MediaStore
import MediaStreaming
import Testing

@testable import MediaStreamingAVFoundationGlue

/// `CachingAVPlayerItem` for an HLS URL plays through the loopback
/// `MediaServer` it is given as its `PlaylistLocalizer` (its asset gets the
/// server's local URL, and no resource loader delegate), not through the
/// resource loader; with no server, or one of another cache or stopped,
/// the origin URL itself. Checked through the stand-in by the URL
/// the asset gets.
@Suite("AVFoundation glue: HLS through the loopback server")
@MainActor
struct HLSRoutingTests {
    let server = GlueServer.shared

    static func cache() throws -> (StreamingCache, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("avglue-hls-\(UUID().uuidString)")
        return (StreamingCache(store: try MediaStore(directory: directory)), directory)
    }

    @Test("With a MediaServer running over the cache: the asset is the server's local URL, no loader delegate")
    func throughTheServer() async throws {
        let (cache, directory) = try Self.cache()
        defer { try? FileManager.default.removeItem(at: directory) }
        let local = MediaServer(cache: cache)
        try local.start()
        defer { local.stop() }
        let master = server.url("HLS/master/master.m3u8")
        let item = CachingAVPlayerItem(streamingItem: StreamingItem(url: master, cache: cache), playlists: local)
        let asset = try #require(item.asset as? AVURLAsset)
        #expect(asset.url == local.hlsURL(for: master))
        #expect(asset.url.scheme == "http" && asset.url.host == "127.0.0.1" && asset.url.port == local.port)
        #expect(asset.resourceLoader.delegate == nil && asset.resourceLoader.standInSetDelegateCalls == 0)
        // The URL plays: the server answers the master playlist, rewritten to itself.
        let response = try await HTTPOrigin(timeout: .seconds(10)).fetch(OriginRequest(url: asset.url))
        var body = Data()
        for try await piece in response.body { body.append(piece) }
        #expect(response.statusCode == 200 && response.mimeType == "application/vnd.apple.mpegurl")
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("http://127.0.0.1:\(local.port ?? 0)/") && !text.contains("\nhigh.m3u8"))
        // A progressive URL of the same cache still goes through the resource loader.
        let track = CachingAVPlayerItem(streamingItem: StreamingItem(url: server.url("track.mp3"), cache: cache))
        let trackAsset = try #require(track.asset as? AVURLAsset)
        #expect(trackAsset.url.scheme == "mediacache-http" && trackAsset.resourceLoader.delegate != nil)
    }

    @Test("With no server over that cache (none, another cache's, or stopped): the origin URL, no loader delegate")
    func withoutAServer() throws {
        let (cache, directory) = try Self.cache()
        let (other, otherDirectory) = try Self.cache()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: otherDirectory)
        }
        let master = server.url("HLS/ts/media.m3u8")
        let otherServer = MediaServer(cache: other)
        try otherServer.start()
        defer { otherServer.stop() }
        let stopped = MediaServer(cache: cache)
        try stopped.start()
        stopped.stop()
        let localizers: [(any PlaylistLocalizer)?] = [nil, otherServer, stopped]
        for localizer in localizers {
            let item = CachingAVPlayerItem(
                streamingItem: StreamingItem(url: master, cache: cache), playlists: localizer)
            let asset = try #require(item.asset as? AVURLAsset)
            #expect(asset.url == master)
            #expect(asset.resourceLoader.delegate == nil)
        }
    }
}
