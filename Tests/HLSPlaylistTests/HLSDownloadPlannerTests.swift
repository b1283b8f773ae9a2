import Foundation
import HLSPlaylist
import Testing

@Suite("HLS download plans")
struct HLSDownloadPlannerTests {
    static let root = URL(string: "https://cdn.example.com/show/")!

    static func media(_ path: String, _ body: String, endList: Bool = true) throws -> MediaPlaylist {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n" + body + (endList ? "#EXT-X-ENDLIST\n" : "")
        return try #require(try PlaylistParser.parse(text, url: URL(string: path, relativeTo: root)!.absoluteURL).media)
    }

    static let master = try! #require(
        try PlaylistParser.parse(
            """
            #EXTM3U
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://keys.example.com/k1?token=abc"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="French",LANGUAGE="fr",URI="audio/fr.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="English",LANGUAGE="en",URI="subs/en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1000000,AUDIO="a",SUBTITLES="s"
            video/index.m3u8
            """, url: URL(string: "master.m3u8", relativeTo: root)!.absoluteURL
        ).master)

    static func playlists() throws -> [MediaPlaylist] {
        [
            try media(
                "video/index.m3u8",
                """
                #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k1?token=xyz"
                #EXT-X-MAP:URI="init.mp4"
                #EXTINF:4,
                v0.m4s?token=1
                #EXTINF:4,
                v1.m4s?token=2
                #EXTINF:2,
                v2.m4s?token=3

                """),
            try media(
                "audio/en.m3u8",
                "#EXT-X-MAP:URI=\"../video/init.mp4\"\n#EXTINF:5,\nen0.m4s\n#EXTINF:5,\nen1.m4s\n"),
            try media("audio/fr.m3u8", "#EXTINF:5,\nfr0.m4s\n#EXTINF:5,\nfr1.m4s\n"),
            try media("subs/en.m3u8", "#EXTINF:10,\nen.vtt\n"),
        ]
    }

    /// A cache key without the `token` query item.
    static func dropToken(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        let kept = (components.queryItems ?? []).filter { $0.name != "token" }
        components.queryItems = kept.isEmpty ? nil : kept
        return components.url?.absoluteString ?? url.absoluteString
    }

    @Test("Master, media playlists, then keys, maps and segments interleaved by time, each once")
    func order() throws {
        let selection = try VariantSelector.select(from: Self.master, subtitles: .automatic)
        let plan = try HLSDownloadPlanner.plan(
            master: Self.master, selection: selection, mediaPlaylists: try Self.playlists(), cacheKey: Self.dropToken)
        let names = plan.resources.map { "\($0.kind.rawValue):\($0.url.lastPathComponent)" }
        #expect(
            names == [
                "masterPlaylist:master.m3u8", "key:k1", "mediaPlaylist:index.m3u8", "mediaPlaylist:en.m3u8",
                "mediaPlaylist:en.m3u8",
                // time 0: the video's init segment and first segment, then the
                // audio's (its init segment is the same URL: listed once), the subtitles
                "initializationSegment:init.mp4", "segment:v0.m4s", "segment:en0.m4s", "segment:en.vtt",
                "segment:v1.m4s", "segment:en1.m4s", "segment:v2.m4s",
            ])
        // The session key and the media key differ only in the token: one entry.
        #expect(plan.resources(of: .key).count == 1)
        #expect(plan.resources[1].cacheKey.key == "https://keys.example.com/k1")
        #expect(plan.resources(of: .segment)[0].cacheKey.key == "https://cdn.example.com/show/video/v0.m4s")
        #expect(plan.resources(of: .segment)[0].url.query == "token=1", "the URL fetched keeps its token")
        #expect(plan.resources(of: .segment).map(\.mediaType) == [nil, .audio, .subtitles, nil, .audio, nil])
        #expect(plan.resources(of: .segment).map(\.duration) == [4, 5, 10, 4, 5, 2])
        #expect(plan.tracks.map(\.segmentCount) == [3, 2, 1])
        #expect(plan.tracks.map(\.duration) == [10, 10, 10])
        #expect(plan.tracks.map(\.mediaType) == [nil, .audio, .subtitles])
        #expect(plan.cacheKeys.count == plan.resources.count)
    }

    @Test("Augment: a second audio language adds only its playlist and segments")
    func augment() throws {
        let playlists = try Self.playlists()
        let first = try HLSDownloadPlanner.plan(
            master: Self.master, selection: try VariantSelector.select(from: Self.master), mediaPlaylists: playlists)
        let both = try HLSDownloadPlanner.plan(
            master: Self.master,
            selection: try VariantSelector.select(from: Self.master, audio: .languages(["en", "fr"])),
            mediaPlaylists: playlists)
        let added = both.missing(from: first.cacheKeys)
        #expect(added.map(\.url.lastPathComponent) == ["fr.m3u8", "fr0.m4s", "fr1.m4s"])
        #expect(first.missing(from: first.cacheKeys).isEmpty)
        #expect(first.missing(from: []).count == first.resources.count)
    }

    @Test("Byte ranges of one file are distinct resources; an implicit offset is resolved; the map's range too")
    func byteRanges() throws {
        let playlist = try Self.media(
            "single.m3u8",
            """
            #EXT-X-MAP:URI="all.mp4",BYTERANGE="700@0"
            #EXTINF:4,
            #EXT-X-BYTERANGE:1000@700
            all.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:1200
            all.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:1200
            all.mp4

            """)
        let plan = try HLSDownloadPlanner.plan(media: playlist)
        #expect(plan.resources.map(\.kind) == [.mediaPlaylist, .initializationSegment, .segment, .segment, .segment])
        #expect(
            plan.resources.map(\.byteRange) == [
                nil, ByteRange(offset: 0, length: 700), ByteRange(offset: 700, length: 1000),
                ByteRange(offset: 1700, length: 1200), ByteRange(offset: 2900, length: 1200),
            ])
        #expect(Set(plan.resources.dropFirst().map(\.url)).count == 1)
        #expect(plan.cacheKeys.count == 5)
        #expect(
            plan.resources.map(\.cacheKey.storeKey).dropFirst() == [
                "https://cdn.example.com/show/all.mp4 bytes=0-699",
                "https://cdn.example.com/show/all.mp4 bytes=700-1699",
                "https://cdn.example.com/show/all.mp4 bytes=1700-2899",
                "https://cdn.example.com/show/all.mp4 bytes=2900-4099",
            ])
        #expect(plan.resources[0].cacheKey.storeKey == "https://cdn.example.com/show/single.m3u8")
    }

    @Test("A key rotated every two segments is fetched once per key, before its first segment")
    func keyRotation() throws {
        let playlist = try Self.media(
            "rotating.m3u8",
            """
            #EXT-X-KEY:METHOD=AES-128,URI="k0"
            #EXTINF:4,
            s0.ts
            #EXTINF:4,
            s1.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x1
            #EXTINF:4,
            s2.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            s3.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k0"
            #EXTINF:4,
            s4.ts

            """)
        let plan = try HLSDownloadPlanner.plan(media: playlist)
        #expect(
            plan.resources.map(\.url.lastPathComponent) == [
                "rotating.m3u8", "k0", "s0.ts", "s1.ts", "k1", "s2.ts", "s3.ts", "s4.ts",
            ])
    }

    @Test("A live playlist (no EXT-X-ENDLIST) is refused, also as a rendition")
    func live() throws {
        let live = try Self.media("live.m3u8", "#EXTINF:4,\na.ts\n", endList: false)
        #expect(throws: HLSPlanError.liveContent(playlistURL: live.url)) { try HLSDownloadPlanner.plan(media: live) }
        var playlists = try Self.playlists()
        playlists[1] = try Self.media("audio/en.m3u8", "#EXTINF:5,\nen0.m4s\n", endList: false)
        #expect(throws: HLSPlanError.liveContent(playlistURL: playlists[1].url)) {
            try HLSDownloadPlanner.plan(
                master: Self.master, selection: try VariantSelector.select(from: Self.master),
                mediaPlaylists: playlists)
        }
    }

    @Test("SAMPLE-AES, FairPlay skd:// and non-identity formats are unsupported for offline")
    func unsupportedKeys() throws {
        let cases: [(String, PlaylistKey.Method, String, String)] = [
            (
                "METHOD=SAMPLE-AES,URI=\"skd://asset-1\",KEYFORMAT=\"com.apple.streamingkeydelivery\"", .sampleAES,
                "com.apple.streamingkeydelivery", "skd://asset-1"
            ),
            ("METHOD=SAMPLE-AES,URI=\"https://k/1\"", .sampleAES, "identity", "https://k/1"),
            ("METHOD=SAMPLE-AES-CTR,URI=\"https://k/1\"", .sampleAESCTR, "identity", "https://k/1"),
            ("METHOD=AES-128,URI=\"skd://asset-2\"", .aes128, "identity", "skd://asset-2"),
            (
                "METHOD=AES-128,URI=\"https://k/2\",KEYFORMAT=\"com.example.drm\"", .aes128, "com.example.drm",
                "https://k/2"
            ),
        ]
        for (attributes, method, format, keyURL) in cases {
            let playlist = try Self.media("enc.m3u8", "#EXT-X-KEY:\(attributes)\n#EXTINF:4,\na.ts\n")
            #expect(
                throws: HLSPlanError.unsupportedEncryption(
                    method: method, keyFormat: format, keyURL: URL(string: keyURL)!, playlistURL: playlist.url)
            ) { try HLSDownloadPlanner.plan(media: playlist) }
        }
        let fairPlayMaster = try #require(
            try PlaylistParser.parse(
                "#EXTM3U\n#EXT-X-SESSION-KEY:METHOD=SAMPLE-AES,URI=\"skd://s\",KEYFORMAT=\"com.apple.streamingkeydelivery\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nvideo/index.m3u8\n",
                url: Self.master.url
            ).master)
        #expect(throws: HLSPlanError.self) {
            try HLSDownloadPlanner.plan(
                master: fairPlayMaster, selection: try VariantSelector.select(from: fairPlayMaster),
                mediaPlaylists: try Self.playlists())
        }
        let error = HLSPlanError.unsupportedEncryption(
            method: .sampleAES, keyFormat: "com.apple.streamingkeydelivery", keyURL: URL(string: "skd://a"),
            playlistURL: Self.master.url)
        #expect(error.description.contains("SAMPLE-AES") && error.description.contains("FairPlay"))
    }

    @Test("A media playlist the selection needs but was not given")
    func missingPlaylist() throws {
        let playlists = try Self.playlists().filter { !$0.url.path.hasSuffix("fr.m3u8") }
        let selection = try VariantSelector.select(from: Self.master, audio: .languages(["fr"]))
        #expect(throws: HLSPlanError.missingMediaPlaylist(URL(string: "https://cdn.example.com/show/audio/fr.m3u8")!)) {
            try HLSDownloadPlanner.plan(master: Self.master, selection: selection, mediaPlaylists: playlists)
        }
    }
}
