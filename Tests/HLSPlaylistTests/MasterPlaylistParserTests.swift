import Foundation
import HLSPlaylist
import Testing

/// The master playlist tags of RFC 8216.
@Suite("HLS master playlist parsing")
struct MasterPlaylistParserTests {
    static let base = URL(string: "https://cdn.example.com/show/master.m3u8?session=7")!

    static func master(_ text: String) throws -> MasterPlaylist {
        try #require(try PlaylistParser.parse(text, url: base).master)
    }

    static let sample = """
        #EXTM3U
        #EXT-X-VERSION:6
        #EXT-X-INDEPENDENT-SEGMENTS
        #EXT-X-SESSION-KEY:METHOD=AES-128,URI="https://keys.example.com/session.key",IV=0x00000000000000000000000000000001
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,CHANNELS="2",URI="audio/en.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch, Kommentar",LANGUAGE="de",ASSOC-LANGUAGE="en",DEFAULT=NO,AUTOSELECT=YES,CHARACTERISTICS="public.accessibility.describes-video,public.easy-to-read",URI="audio/de.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="muxed",NAME="Main",DEFAULT=YES
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",FORCED=NO,URI="subs/en.m3u8"
        #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1",LANGUAGE="en"
        #EXT-X-MEDIA:TYPE=VIDEO,GROUP-ID="angles",NAME="Angle 1",DEFAULT=YES,URI="video/angle1.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=1280000,AVERAGE-BANDWIDTH=1000000,CODECS="avc1.4d401f,mp4a.40.2",RESOLUTION=1280x720,FRAME-RATE=29.970,AUDIO="aac",SUBTITLES="subs",CLOSED-CAPTIONS="cc"
        video/720.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=86000,CODECS="avc1.4d401f",URI="video/720-iframes.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=640000,CODECS="avc1.42e01e",RESOLUTION=640x360,AUDIO="muxed",CLOSED-CAPTIONS=NONE,VIDEO="angles"

        https://other.example.org/360.m3u8
        #EXT-X-SESSION-DATA:DATA-ID="com.example.title",VALUE="Show"
        """

    @Test("EXT-X-STREAM-INF: BANDWIDTH, AVERAGE-BANDWIDTH, CODECS, RESOLUTION, FRAME-RATE, group ids, URI line")
    func variants() throws {
        let master = try Self.master(Self.sample)
        #expect(master.version == 6)
        #expect(master.hasIndependentSegments)
        #expect(master.variants.count == 2)
        let high = master.variants[0]
        #expect(high.url.absoluteString == "https://cdn.example.com/show/video/720.m3u8")
        #expect(high.bandwidth == 1_280_000)
        #expect(high.averageBandwidth == 1_000_000)
        #expect(high.codecs == ["avc1.4d401f", "mp4a.40.2"])
        #expect(high.resolution == Resolution(width: 1280, height: 720))
        #expect(high.frameRate == 29.97)
        #expect(high.audioGroup == "aac" && high.subtitlesGroup == "subs" && high.closedCaptionsGroup == "cc")
        #expect(high.videoGroup == nil)
        let low = master.variants[1]
        #expect(low.url.absoluteString == "https://other.example.org/360.m3u8")
        #expect(low.averageBandwidth == nil && low.frameRate == nil)
        #expect(low.closedCaptionsGroup == nil)
        #expect(low.videoGroup == "angles" && low.audioGroup == "muxed")
    }

    @Test("EXT-X-MEDIA: TYPE, GROUP-ID, NAME, LANGUAGE, DEFAULT, AUTOSELECT, URI and the rest")
    func renditions() throws {
        let master = try Self.master(Self.sample)
        #expect(master.renditions.count == 6)
        let english = master.renditions[0]
        #expect(english.type == .audio && english.groupID == "aac" && english.name == "English")
        #expect(english.language == "en" && english.isDefault && english.autoselect && english.channels == "2")
        #expect(english.url?.absoluteString == "https://cdn.example.com/show/audio/en.m3u8")
        let german = master.renditions[1]
        #expect(german.name == "Deutsch, Kommentar")
        #expect(german.associatedLanguage == "en" && !german.isDefault && german.autoselect)
        #expect(german.characteristics == ["public.accessibility.describes-video", "public.easy-to-read"])
        #expect(master.renditions[2].url == nil)
        #expect(master.renditions[3].type == .subtitles && !master.renditions[3].isForced)
        #expect(master.renditions[4].type == .closedCaptions && master.renditions[4].instreamID == "CC1")
        #expect(master.renditions[5].type == .video)
        #expect(master.renditions(ofType: .audio, inGroup: "aac").map(\.language) == ["en", "de"])
    }

    @Test("EXT-X-I-FRAME-STREAM-INF is recognised and kept apart from the variants")
    func iFrames() throws {
        let master = try Self.master(Self.sample)
        #expect(
            master.iFramePlaylistURLs.map(\.absoluteString) == ["https://cdn.example.com/show/video/720-iframes.m3u8"])
        #expect(!master.variants.contains { $0.url.lastPathComponent.contains("iframes") })
    }

    @Test("EXT-X-SESSION-KEY")
    func sessionKey() throws {
        let master = try Self.master(Self.sample)
        #expect(master.sessionKeys.count == 1)
        #expect(master.sessionKeys[0].method == .aes128)
        #expect(master.sessionKeys[0].url?.absoluteString == "https://keys.example.com/session.key")
        #expect(master.sessionKeys[0].initializationVector == Array(repeating: 0, count: 15) + [1])
    }

    @Test("A master playlist whose only tags are unknown ones next to STREAM-INF still parses")
    func minimal() throws {
        let master = try Self.master(
            "#EXTM3U\n#EXT-X-CONTENT-STEERING:SERVER-URI=\"s\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8")
        #expect(master.variants.map(\.bandwidth) == [1])
        #expect(master.renditions.isEmpty && master.sessionKeys.isEmpty)
        #expect(Playlist.master(master).url == Self.base)
    }
}
