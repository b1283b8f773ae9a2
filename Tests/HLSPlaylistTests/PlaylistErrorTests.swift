import Foundation
import HLSPlaylist
import Testing

/// Every malformed playlist gives a typed error with its line number.
@Suite("HLS playlist errors")
struct PlaylistErrorTests {
    static let base = URL(string: "https://cdn.example.com/a/index.m3u8")!
    static let media = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"

    static func error(_ text: String) -> PlaylistError? {
        do {
            _ = try PlaylistParser.parse(text, url: base)
            return nil
        } catch {
            return error
        }
    }

    static func expectError(
        _ text: String, line: Int, _ reason: PlaylistError.Reason, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error(text) == PlaylistError(line: line, reason: reason), sourceLocation: sourceLocation)
    }

    @Test("No #EXTM3U first line, an empty text, leading blank line")
    func header() {
        Self.expectError("", line: 0, .missingHeader)
        Self.expectError("#EXT-X-TARGETDURATION:2\n", line: 1, .missingHeader)
        Self.expectError("\n#EXTM3U\n", line: 1, .missingHeader)
        Self.expectError("#EXTM3U8\n", line: 1, .missingHeader)
    }

    @Test("Bytes that are not UTF-8 name their line")
    func encoding() throws {
        let bytes = Data(Self.media.utf8) + Data([0x23, 0x45, 0x58, 0x54, 0xFF, 0xFE, 0x0A])
        #expect(throws: PlaylistError(line: 3, reason: .invalidEncoding)) {
            try PlaylistParser.parse(bytes, url: Self.base)
        }
    }

    @Test("EXTINF with a bad duration")
    func extinf() {
        for bad in ["", "abc", "-1", "1.2.3", "1e3", "inf", "nan", "0x10", " ,title"] {
            Self.expectError(
                Self.media + "#EXTINF:\(bad),\na.ts\n", line: 3, .invalidValue(tag: "EXTINF", value: "\(bad),"))
        }
        Self.expectError(Self.media + "#EXTINF\na.ts\n", line: 3, .invalidValue(tag: "EXTINF", value: ""))
    }

    @Test("Bad integers in TARGETDURATION, MEDIA-SEQUENCE, DISCONTINUITY-SEQUENCE, VERSION; a bad PLAYLIST-TYPE")
    func integers() {
        Self.expectError(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2.5\n", line: 2, .invalidValue(tag: "EXT-X-TARGETDURATION", value: "2.5"))
        Self.expectError(
            Self.media + "#EXT-X-MEDIA-SEQUENCE:-1\n", line: 3, .invalidValue(tag: "EXT-X-MEDIA-SEQUENCE", value: "-1"))
        Self.expectError(
            Self.media + "#EXT-X-DISCONTINUITY-SEQUENCE:99999999999999999999\n", line: 3,
            .invalidValue(tag: "EXT-X-DISCONTINUITY-SEQUENCE", value: "99999999999999999999"))
        Self.expectError("#EXTM3U\n#EXT-X-VERSION:+3\n", line: 2, .invalidValue(tag: "EXT-X-VERSION", value: "+3"))
        Self.expectError(
            Self.media + "#EXT-X-PLAYLIST-TYPE:LIVE\n", line: 3,
            .invalidValue(tag: "EXT-X-PLAYLIST-TYPE", value: "LIVE"))
    }

    @Test("A media sequence so large the segment numbers would overflow")
    func sequenceOverflow() {
        Self.expectError(
            Self.media + "#EXT-X-MEDIA-SEQUENCE:9223372036854775807\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n", line: 0,
            .invalidValue(tag: "EXT-X-MEDIA-SEQUENCE", value: "9223372036854775807"))
    }

    @Test("Tags that may appear once, twice")
    func duplicateTags() {
        Self.expectError(Self.media + "#EXT-X-TARGETDURATION:3\n", line: 3, .duplicateTag("EXT-X-TARGETDURATION"))
        Self.expectError(
            Self.media + "#EXT-X-MEDIA-SEQUENCE:1\n#EXT-X-MEDIA-SEQUENCE:1\n", line: 4,
            .duplicateTag("EXT-X-MEDIA-SEQUENCE"))
        Self.expectError("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-VERSION:4\n", line: 3, .duplicateTag("EXT-X-VERSION"))
        Self.expectError(
            Self.media + "#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-PLAYLIST-TYPE:VOD\n", line: 4,
            .duplicateTag("EXT-X-PLAYLIST-TYPE"))
    }

    @Test("A media playlist without EXT-X-TARGETDURATION; #EXTM3U alone")
    func targetDuration() {
        Self.expectError("#EXTM3U\n#EXTINF:2,\na.ts\n#EXT-X-ENDLIST\n", line: 0, .missingTargetDuration)
        Self.expectError("#EXTM3U\n", line: 0, .missingTargetDuration)
    }

    @Test("A URI line without EXTINF or STREAM-INF; EXTINF, STREAM-INF or BYTERANGE without a URI")
    func uriPairing() {
        Self.expectError(Self.media + "a.ts\n", line: 3, .unexpectedURI)
        Self.expectError(Self.media + "#EXTINF:2,\na.ts\nb.ts\n", line: 5, .unexpectedURI)
        Self.expectError(Self.media + "#EXTINF:2,\n", line: 3, .missingURI(tag: "EXTINF"))
        Self.expectError(Self.media + "#EXTINF:2,\n#EXTINF:2,\na.ts\n", line: 4, .missingURI(tag: "EXTINF"))
        Self.expectError(Self.media + "#EXT-X-BYTERANGE:10@0\n", line: 3, .missingURI(tag: "EXT-X-BYTERANGE"))
        Self.expectError(
            Self.media + "#EXT-X-BYTERANGE:10@0\n#EXT-X-BYTERANGE:10@0\n", line: 4, .missingURI(tag: "EXT-X-BYTERANGE"))
        Self.expectError("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", line: 2, .missingURI(tag: "EXT-X-STREAM-INF"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n#EXT-X-STREAM-INF:BANDWIDTH=2\nv.m3u8\n", line: 3,
            .missingURI(tag: "EXT-X-STREAM-INF"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"x\"\nv.m3u8\n", line: 3, .unexpectedURI)
    }

    @Test("A URI that cannot be a URL")
    func invalidURI() {
        Self.expectError(Self.media + "#EXTINF:2,\nhttp://[::1\n", line: 4, .invalidURI("http://[::1"))
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=AES-128,URI=\"\"\n", line: 3, .invalidURI(""))
        Self.expectError(Self.media + "#EXT-X-MAP:URI=\"http://h:x/\"\n", line: 3, .invalidURI("http://h:x/"))
        Self.expectError(Self.media + "#EXTINF:2,\n://\n", line: 4, .invalidURI("://"))
    }

    @Test("EXT-X-BYTERANGE: bad forms, zero length, no offset without a previous range of the same URI, overflow")
    func byteRanges() {
        for bad in ["", "abc", "10@", "@10", "10@-1", "-10", "10@5@5", "0", "0@5"] {
            Self.expectError(
                Self.media + "#EXT-X-BYTERANGE:\(bad)\n#EXTINF:2,\na.ts\n", line: 3,
                .invalidValue(tag: "EXT-X-BYTERANGE", value: bad))
        }
        Self.expectError(Self.media + "#EXTINF:2,\n#EXT-X-BYTERANGE:10\na.ts\n", line: 4, .byteRangeWithoutPrevious)
        Self.expectError(
            Self.media + "#EXTINF:2,\n#EXT-X-BYTERANGE:10@0\na.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:10\nb.ts\n", line: 7,
            .byteRangeWithoutPrevious)
        Self.expectError(
            Self.media + "#EXTINF:2,\na.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:10\na.ts\n", line: 6, .byteRangeWithoutPrevious
        )
        Self.expectError(
            Self.media + "#EXTINF:2,\n#EXT-X-BYTERANGE:10@9223372036854775800\na.ts\n", line: 4, .byteRangeOverflow)
    }

    @Test("EXT-X-KEY: no METHOD, an unknown METHOD, no URI, a bad IV, bad KEYFORMATVERSIONS, a quoted METHOD")
    func keys() {
        let tag = "EXT-X-KEY"
        Self.expectError(
            Self.media + "#EXT-X-KEY:URI=\"k\"\n", line: 3, .missingAttribute(tag: tag, attribute: "METHOD"))
        Self.expectError(Self.media + "#EXT-X-KEY\n", line: 3, .missingAttribute(tag: tag, attribute: "METHOD"))
        Self.expectError(Self.media + "#EXT-X-KEY:METHOD=AES-256,URI=\"k\"\n", line: 3, .unknownKeyMethod("AES-256"))
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=AES-128\n", line: 3, .missingAttribute(tag: tag, attribute: "URI"))
        for iv in ["0x", "0xZZ", "12", "0x" + String(repeating: "0", count: 33)] {
            Self.expectError(
                Self.media + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=\(iv)\n", line: 3,
                .invalidAttribute(tag: tag, attribute: "IV", value: iv))
        }
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",KEYFORMATVERSIONS=\"1/x\"\n", line: 3,
            .invalidAttribute(tag: tag, attribute: "KEYFORMATVERSIONS", value: "1/x"))
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=\"AES-128\",URI=\"k\"\n", line: 3,
            .invalidAttribute(tag: tag, attribute: "METHOD", value: "AES-128"))
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=AES-128,URI=k\n", line: 3,
            .invalidAttribute(tag: tag, attribute: "URI", value: "k"))
    }

    @Test("EXT-X-MAP: no URI, a BYTERANGE without an offset or of a bad form, an overflowing one")
    func maps() {
        let tag = "EXT-X-MAP"
        Self.expectError(
            Self.media + "#EXT-X-MAP:BYTERANGE=\"10@0\"\n", line: 3, .missingAttribute(tag: tag, attribute: "URI"))
        for bad in ["10", "x@0", "0@0", "10@"] {
            Self.expectError(
                Self.media + "#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"\(bad)\"\n", line: 3,
                .invalidAttribute(tag: tag, attribute: "BYTERANGE", value: bad))
        }
        Self.expectError(
            Self.media + "#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"10@9223372036854775807\"\n", line: 3, .byteRangeOverflow)
    }

    @Test(
        "Malformed attribute lists: no =, no name, an unterminated quote, text after a quote, an empty value, a stray quote, a lowercase name"
    )
    func attributeLists() {
        func check(_ attributes: String, _ detail: String, sourceLocation: SourceLocation = #_sourceLocation) {
            Self.expectError(
                Self.media + "#EXT-X-KEY:\(attributes)\n", line: 3,
                .malformedAttributeList(tag: "EXT-X-KEY", detail: detail), sourceLocation: sourceLocation)
        }
        check("METHOD", "METHOD is not followed by =")
        check("=AES-128", "an attribute without a name")
        check("METHOD=AES-128,URI=\"k", "the value of URI has no closing quote")
        check("METHOD=AES-128,URI=\"k\"x", "text after the quoted value of URI")
        check("METHOD=,URI=\"k\"", "METHOD has an empty value")
        check("METHOD=AES\"128,URI=\"k\"", "a stray quote in the value of METHOD")
        check("method=AES-128", "an attribute without a name")
        Self.expectError(
            Self.media + "#EXT-X-KEY:METHOD=AES-128,URI=\"a\",URI=\"b\"\n", line: 3,
            .duplicateAttribute(tag: "EXT-X-KEY", attribute: "URI"))
    }

    @Test(
        "EXT-X-STREAM-INF: no BANDWIDTH, a bad BANDWIDTH, RESOLUTION, FRAME-RATE, CLOSED-CAPTIONS, quoted CODECS required"
    )
    func streamInf() {
        let tag = "EXT-X-STREAM-INF"
        func check(
            _ attributes: String, _ reason: PlaylistError.Reason, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            Self.expectError(
                "#EXTM3U\n#EXT-X-STREAM-INF:\(attributes)\nv.m3u8\n", line: 2, reason, sourceLocation: sourceLocation)
        }
        check("CODECS=\"avc1\"", .missingAttribute(tag: tag, attribute: "BANDWIDTH"))
        check("BANDWIDTH=1.5", .invalidAttribute(tag: tag, attribute: "BANDWIDTH", value: "1.5"))
        check("BANDWIDTH=\"1000\"", .invalidAttribute(tag: tag, attribute: "BANDWIDTH", value: "1000"))
        check(
            "BANDWIDTH=1,RESOLUTION=1280*720", .invalidAttribute(tag: tag, attribute: "RESOLUTION", value: "1280*720"))
        check("BANDWIDTH=1,FRAME-RATE=-30", .invalidAttribute(tag: tag, attribute: "FRAME-RATE", value: "-30"))
        check("BANDWIDTH=1,CLOSED-CAPTIONS=cc", .invalidAttribute(tag: tag, attribute: "CLOSED-CAPTIONS", value: "cc"))
        check("BANDWIDTH=1,CODECS=avc1", .invalidAttribute(tag: tag, attribute: "CODECS", value: "avc1"))
    }

    @Test("A variant naming a group that no EXT-X-MEDIA of that TYPE defines")
    func unknownGroups() {
        Self.expectError(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"aac\"\nv.m3u8\n", line: 2,
            .unknownGroup(type: "AUDIO", groupID: "aac"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"subs\",NAME=\"a\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=1,SUBTITLES=\"subs\"\nw.m3u8\n",
            line: 5, .unknownGroup(type: "SUBTITLES", groupID: "subs"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,CLOSED-CAPTIONS=\"cc\"\nv.m3u8\n", line: 2,
            .unknownGroup(type: "CLOSED-CAPTIONS", groupID: "cc"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,VIDEO=\"v\"\nv.m3u8\n", line: 2,
            .unknownGroup(type: "VIDEO", groupID: "v"))
    }

    @Test(
        "EXT-X-MEDIA: no TYPE, an unknown TYPE, no GROUP-ID or NAME, SUBTITLES without URI, CLOSED-CAPTIONS with one, DEFAULT=maybe"
    )
    func media() {
        let tag = "EXT-X-MEDIA"
        func check(
            _ attributes: String, _ reason: PlaylistError.Reason, sourceLocation: SourceLocation = #_sourceLocation
        ) {
            Self.expectError("#EXTM3U\n#EXT-X-MEDIA:\(attributes)\n", line: 2, reason, sourceLocation: sourceLocation)
        }
        check("GROUP-ID=\"a\",NAME=\"n\"", .missingAttribute(tag: tag, attribute: "TYPE"))
        check("TYPE=SOUND,GROUP-ID=\"a\",NAME=\"n\"", .invalidAttribute(tag: tag, attribute: "TYPE", value: "SOUND"))
        check("TYPE=AUDIO,NAME=\"n\"", .missingAttribute(tag: tag, attribute: "GROUP-ID"))
        check("TYPE=AUDIO,GROUP-ID=\"a\"", .missingAttribute(tag: tag, attribute: "NAME"))
        check("TYPE=SUBTITLES,GROUP-ID=\"s\",NAME=\"n\"", .missingAttribute(tag: tag, attribute: "URI"))
        check(
            "TYPE=CLOSED-CAPTIONS,GROUP-ID=\"c\",NAME=\"n\",INSTREAM-ID=\"CC1\",URI=\"c.m3u8\"",
            .invalidAttribute(tag: tag, attribute: "URI", value: "c.m3u8"))
        check(
            "TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\",DEFAULT=maybe",
            .invalidAttribute(tag: tag, attribute: "DEFAULT", value: "maybe"))
    }

    @Test("EXT-X-I-FRAME-STREAM-INF without URI or BANDWIDTH; EXT-X-SESSION-KEY with METHOD=NONE")
    func masterOthers() {
        Self.expectError(
            "#EXTM3U\n#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1\n", line: 2,
            .missingAttribute(tag: "EXT-X-I-FRAME-STREAM-INF", attribute: "URI"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-I-FRAME-STREAM-INF:URI=\"i.m3u8\"\n", line: 2,
            .missingAttribute(tag: "EXT-X-I-FRAME-STREAM-INF", attribute: "BANDWIDTH"))
        Self.expectError(
            "#EXTM3U\n#EXT-X-SESSION-KEY:METHOD=NONE\n", line: 2,
            .invalidAttribute(tag: "EXT-X-SESSION-KEY", attribute: "METHOD", value: "NONE"))
    }

    @Test("Master and media tags mixed, in either order")
    func mixed() {
        Self.expectError(Self.media + "#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n", line: 3, .mixedPlaylist)
        Self.expectError("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n#EXTINF:2,\na.ts\n", line: 4, .mixedPlaylist)
        Self.expectError("#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"x\"\n#EXT-X-ENDLIST\n", line: 3, .mixedPlaylist)
    }

    @Test("Errors describe themselves with their line")
    func descriptions() {
        #expect(PlaylistError(line: 7, reason: .unexpectedURI).description.hasPrefix("line 7: "))
        #expect(PlaylistError(line: 0, reason: .missingTargetDuration).description.hasPrefix("playlist: "))
        #expect(
            "\(PlaylistError(line: 2, reason: .unknownGroup(type: "AUDIO", groupID: "a")))"
                == "line 2: no EXT-X-MEDIA of TYPE=AUDIO has GROUP-ID \"a\"")
    }
}
