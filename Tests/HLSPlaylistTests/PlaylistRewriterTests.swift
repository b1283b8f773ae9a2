import Foundation
import HLSPlaylist
import Testing

@Suite("HLS playlist rewriting")
struct PlaylistRewriterTests {
    static let url = URL(string: "https://cdn.example.com/show/video/index.m3u8")!

    /// Maps each reference to a local URL naming its kind, URL and range,
    /// and records what it was given.
    final class Recorder: @unchecked Sendable {
        var references: [PlaylistReference] = []
        func local(_ reference: PlaylistReference) -> URL? {
            references.append(reference)
            var path = "\(reference.kind.rawValue)/\(reference.references)"
            if let range = reference.byteRange { path += "/\(range.offset)-\(range.length)" }
            return URL(string: "http://127.0.0.1:8080/" + path)
        }
    }

    @Test(
        "Every URI of a media playlist is rewritten; every other byte stays (CRLF, BOM, unknown tags), but an implicit byte-range offset is written out"
    )
    func media() throws {
        let lines = [
            "\u{FEFF}#EXTM3U",
            "#EXT-X-TARGETDURATION:4",
            "# comment with URI=\"nothing.key\"",
            "#EXT-X-UNKNOWN:FOO=1",
            "#EXT-X-KEY:METHOD=AES-128,URI=\"https://keys.example.com/k?a=1,b=2\",IV=0x0F",
            "#EXT-X-MAP:URI=\"init.mp4\",BYTERANGE=\"100@0\"",
            "#EXTINF:4,Title, with comma",
            "#EXT-X-BYTERANGE:500@100",
            "  seg.mp4  ",
            "",
            "#EXTINF:4,",
            "#EXT-X-BYTERANGE:600",
            "seg.mp4",
            "#EXT-X-DATERANGE:ID=\"x\",START-DATE=\"2026-01-01T00:00:00Z\",X-URI=\"keep\"",
            "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"../next.mp4\"",
            "#EXT-X-ENDLIST",
        ]
        let text = lines.joined(separator: "\r\n") + "\r\n"
        let recorder = Recorder()
        let rewritten = try PlaylistRewriter.rewrite(text, url: Self.url, byteRanges: .keep, localURL: recorder.local)
        let out = rewritten.components(separatedBy: "\r\n")
        #expect(out.count == lines.count + 1 && out.last == "")
        #expect(rewritten.utf8.filter { $0 == 0x0A }.count == lines.count)
        #expect(rewritten.utf8.filter { $0 == 0x0D }.count == lines.count)
        #expect(rewritten.utf8.starts(with: [0xEF, 0xBB, 0xBF]))
        let expected = [
            4: "#EXT-X-KEY:METHOD=AES-128,URI=\"http://127.0.0.1:8080/key/k\",IV=0x0F",
            5: "#EXT-X-MAP:URI=\"http://127.0.0.1:8080/initializationSegment/init.mp4/0-100\",BYTERANGE=\"100@0\"",
            8: "  http://127.0.0.1:8080/segment/seg.mp4/100-500  ",
            11: "#EXT-X-BYTERANGE:600@600",
            12: "http://127.0.0.1:8080/segment/seg.mp4/600-600",
            14: "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"http://127.0.0.1:8080/other/next.mp4\"",
        ]
        for (index, line) in lines.enumerated() {
            #expect(out[index] == (expected[index] ?? line), "line \(index + 1)")
        }
        #expect(recorder.references.map(\.kind) == [.key, .initializationSegment, .segment, .segment, .other])
        #expect(recorder.references.map(\.line) == [5, 6, 9, 13, 15])
        #expect(recorder.references[0].url.absoluteString == "https://keys.example.com/k?a=1,b=2")
        #expect(recorder.references[3].byteRange == ByteRange(offset: 600, length: 600))
        #expect(recorder.references[4].url.absoluteString == "https://cdn.example.com/show/next.mp4")
        #expect(recorder.references.map(\.tag) == ["EXT-X-KEY", "EXT-X-MAP", nil, nil, "EXT-X-PRELOAD-HINT"])
    }

    @Test("Every URI of a master playlist: variants, MEDIA, SESSION-KEY, I-FRAME-STREAM-INF; absolute ones too")
    func master() throws {
        let text = """
            #EXTM3U
            #EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://keys.example.com/session"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English, main",URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Muxed"
            #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="a",CODECS="avc1.4d401f,mp4a.40.2"
            http://other.example.org/720.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="iframes.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO="a"
            360.m3u8
            """
        let recorder = Recorder()
        let rewritten = try PlaylistRewriter.rewrite(text, url: Self.url, byteRanges: .keep, localURL: recorder.local)
        #expect(
            rewritten == """
                #EXTM3U
                #EXT-X-SESSION-KEY:METHOD=AES-128,URI="http://127.0.0.1:8080/key/session"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="English, main",URI="http://127.0.0.1:8080/mediaPlaylist/en.m3u8"
                #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="Muxed"
                #EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="a",CODECS="avc1.4d401f,mp4a.40.2"
                http://127.0.0.1:8080/mediaPlaylist/720.m3u8
                #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="http://127.0.0.1:8080/iFramePlaylist/iframes.m3u8"
                #EXT-X-STREAM-INF:BANDWIDTH=2,AUDIO="a"
                http://127.0.0.1:8080/mediaPlaylist/360.m3u8
                """)
        #expect(recorder.references[2].url.absoluteString == "http://other.example.org/720.m3u8")
        #expect(recorder.references[4].url.absoluteString == "https://cdn.example.com/show/video/360.m3u8")
    }

    @Test("A mapping that gives nil leaves the absolute original URL, so the origin is still reached")
    func passThrough() throws {
        let text =
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"skd://asset\"\n#EXTINF:4,\n../a.ts\n"
        let rewritten = try PlaylistRewriter.rewrite(text, url: Self.url, byteRanges: .keep) { reference in
            reference.kind == .segment ? nil : URL(string: "http://127.0.0.1/never")
        }
        #expect(
            rewritten
                == "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI=\"http://127.0.0.1/never\"\n#EXTINF:4,\nhttps://cdn.example.com/show/a.ts\n"
        )
        let kept = try PlaylistRewriter.rewrite(text, url: Self.url, byteRanges: .keep) { _ in nil }
        #expect(kept.contains("URI=\"skd://asset\""))
        #expect(
            try PlaylistParser.parse(kept, url: URL(string: "http://127.0.0.1:9/x.m3u8")!).media?.segments[0].url
                == URL(string: "https://cdn.example.com/show/a.ts"))
    }

    @Test("Removing byte ranges: EXT-X-BYTERANGE lines go, the MAP loses its BYTERANGE; the result parses")
    func removeRanges() throws {
        let text =
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"all.mp4\",BYTERANGE=\"100@0\"\n#EXTINF:4,\n#EXT-X-BYTERANGE:500@100\nall.mp4\n#EXTINF:4,\n#EXT-X-BYTERANGE:500\nall.mp4\n#EXT-X-ENDLIST\n"
        let recorder = Recorder()
        let rewritten = try PlaylistRewriter.rewrite(text, url: Self.url, byteRanges: .remove, localURL: recorder.local)
        #expect(
            rewritten
                == "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI=\"http://127.0.0.1:8080/initializationSegment/all.mp4/0-100\"\n#EXTINF:4,\nhttp://127.0.0.1:8080/segment/all.mp4/100-500\n#EXTINF:4,\nhttp://127.0.0.1:8080/segment/all.mp4/600-500\n#EXT-X-ENDLIST\n"
        )
        let parsed = try #require(try PlaylistParser.parse(rewritten, url: Self.url).media)
        #expect(parsed.segments.allSatisfy { $0.byteRange == nil && $0.map?.byteRange == nil })
        #expect(Set(parsed.segments.map(\.url)).count == 2)
    }

    @Test("Bytes in and out: the Data form keeps a BOM and odd spacing exactly")
    func data() throws {
        let text = "\u{FEFF}#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\t\ta.ts\t\n"
        let bad = "\u{FEFF}#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\t\n"
        let out = try PlaylistRewriter.rewrite(Data(bad.utf8), url: Self.url, byteRanges: .keep) { _ in
            URL(string: "http://l/x")
        }
        #expect(out == Data("\u{FEFF}#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nhttp://l/x\t\n".utf8))
        #expect(throws: PlaylistError(line: 3, reason: .missingURI(tag: "EXTINF"))) {
            try PlaylistRewriter.rewrite(Data(text.utf8), url: Self.url, byteRanges: .keep) { _ in nil }
        }
    }

    @Test("A malformed playlist is not rewritten: the parser's error")
    func malformed() {
        #expect(throws: PlaylistError(line: 3, reason: .unexpectedURI)) {
            try PlaylistRewriter.rewrite("#EXTM3U\n#EXT-X-TARGETDURATION:4\na.ts\n", url: Self.url, byteRanges: .keep) {
                _ in nil
            }
        }
    }
}

extension PlaylistReference {
    /// The last path component, for readable expectations.
    fileprivate var references: String { url.lastPathComponent }
}
