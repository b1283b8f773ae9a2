import Foundation
import HLSPlaylist
import Testing

/// The media playlist tags of RFC 8216, one test per tag or rule.
@Suite("HLS media playlist parsing")
struct MediaPlaylistParserTests {
    static let base = URL(string: "https://cdn.example.com/assets/show/video/index.m3u8")!

    static func media(_ text: String, url: URL = base) throws -> MediaPlaylist {
        try #require(try PlaylistParser.parse(text, url: url).media)
    }

    @Test("EXTINF: duration (integer or decimal) and title, which may hold commas")
    func extinf() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXTINF:9.009,First, with a comma
            a.ts
            #EXTINF:10,
            b.ts
            #EXTINF:3.5
            c.ts
            #EXT-X-ENDLIST
            """)
        #expect(playlist.segments.map(\.duration) == [9.009, 10, 3.5])
        #expect(playlist.segments.map(\.title) == ["First, with a comma", "", ""])
        #expect(playlist.segments.map(\.startTime) == [0, 9.009, 19.009])
        #expect(abs(playlist.duration - 22.509) < 1e-9)
    }

    @Test("EXT-X-TARGETDURATION, EXT-X-MEDIA-SEQUENCE, EXT-X-DISCONTINUITY-SEQUENCE, EXT-X-VERSION")
    func header() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:6
            #EXT-X-MEDIA-SEQUENCE:2680
            #EXT-X-DISCONTINUITY-SEQUENCE:4
            #EXTINF:6,
            a.ts
            #EXTINF:6,
            b.ts
            """)
        #expect(playlist.version == 3)
        #expect(playlist.targetDuration == 6)
        #expect(playlist.mediaSequence == 2680)
        #expect(playlist.segments.map(\.sequenceNumber) == [2680, 2681])
        #expect(playlist.segments.map(\.discontinuitySequence) == [4, 4])
    }

    @Test("Without EXT-X-MEDIA-SEQUENCE the first segment is number 0")
    func defaultSequence() throws {
        let playlist = try Self.media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n")
        #expect(playlist.mediaSequence == 0)
        #expect(playlist.segments.map(\.sequenceNumber) == [0, 1])
    }

    @Test("EXT-X-ENDLIST and EXT-X-PLAYLIST-TYPE VOD / EVENT; no ENDLIST is live")
    func endListAndType() throws {
        let vod = try Self.media(
            "#EXTM3U\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n")
        #expect(vod.playlistType == .vod)
        #expect(vod.hasEndList && !vod.isLive)
        let event = try Self.media("#EXTM3U\n#EXT-X-PLAYLIST-TYPE:EVENT\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n")
        #expect(event.playlistType == .event)
        #expect(!event.hasEndList && event.isLive)
        let live = try Self.media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n")
        #expect(live.playlistType == nil && live.isLive)
    }

    @Test("EXT-X-DISCONTINUITY marks the next segment and counts the discontinuity sequence")
    func discontinuity() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            a.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:2,
            ad.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:2,
            b.ts
            #EXTINF:2,
            c.ts
            #EXT-X-ENDLIST
            """)
        #expect(playlist.segments.map(\.isDiscontinuity) == [false, true, true, false])
        #expect(playlist.segments.map(\.discontinuitySequence) == [0, 1, 2, 2])
    }

    @Test("URIs: relative, root-relative, parent, absolute, with query; resolved against the playlist URL")
    func uris() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            a.ts
            #EXTINF:2,
            sub/b.ts?token=1&x=2
            #EXTINF:2,
            ../audio/c.ts
            #EXTINF:2,
            /root/d.ts
            #EXTINF:2,
            http://other.example.org/e.ts
            #EXTINF:2,
            //third.example.net/f.ts
            """)
        #expect(
            playlist.segments.map(\.url.absoluteString) == [
                "https://cdn.example.com/assets/show/video/a.ts",
                "https://cdn.example.com/assets/show/video/sub/b.ts?token=1&x=2",
                "https://cdn.example.com/assets/show/audio/c.ts",
                "https://cdn.example.com/root/d.ts",
                "http://other.example.org/e.ts",
                "https://third.example.net/f.ts",
            ])
    }

    @Test("A URI with a space or non-ASCII characters is percent-encoded")
    func encodedURI() throws {
        let playlist = try Self.media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nmy segment é.ts\n")
        #expect(
            playlist.segments[0].url.absoluteString
                == "https://cdn.example.com/assets/show/video/my%20segment%20%C3%A9.ts")
    }

    @Test("EXT-X-KEY AES-128 with URI, IV and KEYFORMAT applies until the next key; METHOD=NONE ends it")
    func keys() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            clear.ts
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example.com/k1?id=a,b",IV=0x000102030405060708090A0B0C0D0E0F,KEYFORMAT="identity",KEYFORMATVERSIONS="1/2"
            #EXTINF:2,
            one.ts
            #EXTINF:2,
            two.ts
            #EXT-X-KEY:METHOD=AES-128,URI="k2.key"
            #EXTINF:2,
            three.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:2,
            four.ts
            """)
        let segments = playlist.segments
        #expect(segments[0].keys.isEmpty)
        let first = try #require(segments[1].keys.first)
        #expect(first.method == .aes128)
        #expect(first.url?.absoluteString == "https://keys.example.com/k1?id=a,b")
        #expect(first.initializationVector == Array(0..<16))
        #expect(first.keyFormat == "identity")
        #expect(first.keyFormatVersions == [1, 2])
        #expect(segments[2].keys == [first])
        #expect(segments[3].keys.count == 1)
        #expect(segments[3].keys[0].url?.absoluteString == "https://cdn.example.com/assets/show/video/k2.key")
        #expect(segments[3].keys[0].initializationVector == nil)
        #expect(segments[3].keys[0].keyFormat == PlaylistKey.identityKeyFormat)
        #expect(segments[3].keys[0].keyFormatVersions == [1])
        #expect(segments[4].keys.isEmpty)
    }

    @Test("EXT-X-KEY SAMPLE-AES with an skd:// URI and a FairPlay KEYFORMAT; keys of different formats apply together")
    func sampleAES() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-id-42",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="data:text/plain;base64,AAAA",KEYFORMAT="urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"
            #EXTINF:2,
            a.ts
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key-id-43",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXTINF:2,
            b.ts
            """)
        #expect(playlist.segments[0].keys.map(\.method) == [.sampleAES, .sampleAES])
        #expect(playlist.segments[0].keys[0].url?.absoluteString == "skd://key-id-42")
        #expect(playlist.segments[0].keys[0].keyFormat == "com.apple.streamingkeydelivery")
        // The second FairPlay key replaces the first; the other format stays.
        #expect(
            playlist.segments[1].keys.map(\.url?.absoluteString) == ["data:text/plain;base64,AAAA", "skd://key-id-43"])
    }

    @Test("An IV with fewer than 32 hex digits is left-padded to 16 bytes; 0X is accepted")
    func shortIV() throws {
        let playlist = try Self.media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0X1F\n#EXTINF:2,\na.ts\n")
        #expect(playlist.segments[0].keys[0].initializationVector == Array(repeating: 0, count: 15) + [0x1F])
    }

    @Test("EXT-X-MAP applies to the following segments, with or without its own BYTERANGE")
    func map() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-MAP:URI="init.mp4"
            #EXTINF:2,
            a.m4s
            #EXTINF:2,
            b.m4s
            #EXT-X-MAP:URI="main.mp4",BYTERANGE="720@0"
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000@720
            main.mp4
            """)
        let initial = InitializationMap(url: URL(string: "https://cdn.example.com/assets/show/video/init.mp4")!)
        #expect(playlist.segments[0].map == initial)
        #expect(playlist.segments[1].map == initial)
        let second = try #require(playlist.segments[2].map)
        #expect(second.url.lastPathComponent == "main.mp4")
        #expect(second.byteRange == ByteRange(offset: 0, length: 720))
        #expect(playlist.segments[2].byteRange == ByteRange(offset: 720, length: 1000))
    }

    @Test("EXT-X-BYTERANGE with an offset, and without one (right after the previous range of the same URI)")
    func byteRanges() throws {
        let playlist = try Self.media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            #EXT-X-BYTERANGE:1000@500
            all.ts
            #EXT-X-BYTERANGE:2000
            #EXTINF:2,
            all.ts
            #EXTINF:2,
            #EXT-X-BYTERANGE:300
            all.ts
            #EXTINF:2,
            #EXT-X-BYTERANGE:50@0
            other.ts
            #EXTINF:2,
            whole.ts
            """)
        #expect(
            playlist.segments.map(\.byteRange) == [
                ByteRange(offset: 500, length: 1000), ByteRange(offset: 1500, length: 2000),
                ByteRange(offset: 3500, length: 300), ByteRange(offset: 0, length: 50), nil,
            ])
        #expect(playlist.segments[2].byteRange?.range == 3500..<3800)
    }

    @Test("CRLF line ends, a UTF-8 BOM, blank lines, comments, spaces around lines and unknown tags")
    func tolerated() throws {
        let text =
            "\u{FEFF}#EXTM3U\r\n\r\n# a comment\r\n#EXT-X-TARGETDURATION:4\r\n#EXT-X-FUTURE-TAG:X=1\r\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00Z\r\n  #EXTINF:4,  Title  \r\n  a.ts  \r\n\r\n#EXT-X-ENDLIST\r\n"
        let playlist = try Self.media(text)
        #expect(playlist.segments.count == 1)
        #expect(playlist.segments[0].url.lastPathComponent == "a.ts")
        #expect(playlist.segments[0].title == "Title")
        #expect(playlist.hasEndList)
        let data = try PlaylistParser.parse(Data(text.utf8), url: Self.base)
        #expect(data == .media(playlist))
    }

    @Test("EXT-X-I-FRAMES-ONLY and EXT-X-INDEPENDENT-SEGMENTS are flags")
    func flags() throws {
        let playlist = try Self.media(
            "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-I-FRAMES-ONLY\n#EXT-X-TARGETDURATION:2\n#EXT-X-ENDLIST\n")
        #expect(playlist.isIFramesOnly && playlist.hasIndependentSegments)
        #expect(playlist.segments.isEmpty)
        let plain = try Self.media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n")
        #expect(!plain.isIFramesOnly && !plain.hasIndependentSegments)
    }
}
