import Foundation
import HLSPlaylist
import MediaStreaming
import Testing

/// MediaStreaming's `HLSDownloadPlanner` functions that take a
/// `CacheKeyPolicy`: every resource is keyed by the policy, and fetched
/// from its URL as the playlist wrote it.
@Suite struct HLSDownloadPlannerPolicyTests {
    static let policy = CacheKeyPolicy.droppingQueryItems(["token"])
    static let masterURL = URL(string: "https://cdn.example.com/show/master.m3u8?token=m")!
    static let mediaURL = URL(string: "https://cdn.example.com/show/v/index.m3u8?token=v")!

    static func media() throws -> MediaPlaylist {
        let text = """
            #EXTM3U
            #EXT-X-TARGETDURATION:5
            #EXT-X-KEY:METHOD=AES-128,URI="k1?token=k"
            #EXTINF:5,
            s0.ts?token=1
            #EXTINF:5,
            s1.ts?token=2
            #EXT-X-ENDLIST

            """
        return try #require(try PlaylistParser.parse(text, url: mediaURL).media)
    }

    @Test func aMediaPlaylistIsKeyedByThePolicy() throws {
        let plan = try HLSDownloadPlanner.plan(media: try Self.media(), cacheKey: Self.policy)
        #expect(
            plan.resources.map(\.cacheKey.key) == [
                "https://cdn.example.com/show/v/index.m3u8", "https://cdn.example.com/show/v/k1",
                "https://cdn.example.com/show/v/s0.ts", "https://cdn.example.com/show/v/s1.ts",
            ])
        #expect(plan.resources.map(\.url.query) == ["token=v", "token=k", "token=1", "token=2"])
    }

    @Test func aMasterPlaylistIsKeyedByThePolicy() throws {
        let text = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nv/index.m3u8?token=v\n"
        let master = try #require(try PlaylistParser.parse(text, url: Self.masterURL).master)
        let selection = try VariantSelector.select(from: master)
        let plan = try HLSDownloadPlanner.plan(
            master: master, selection: selection, mediaPlaylists: [try Self.media()], cacheKey: Self.policy)
        #expect(plan.resources.first?.cacheKey.key == "https://cdn.example.com/show/master.m3u8")
        #expect(plan.resources.allSatisfy { !$0.cacheKey.key.contains("token") })
        #expect(plan.resources.allSatisfy { $0.url.query?.hasPrefix("token=") == true })
        #expect(plan.resources.count == 5)
    }
}
