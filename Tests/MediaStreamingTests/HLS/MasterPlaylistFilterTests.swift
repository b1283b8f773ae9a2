import Foundation
import MediaStreaming
import Testing

@Suite("Master playlist filter")
struct MasterPlaylistFilterTests {
    static let url = URL(string: "https://cdn.example.com/a/master.m3u8")!
    static let text = """
        #EXTM3U\r
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="en.m3u8"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="French",LANGUAGE="fr",URI="fr.m3u8"
        #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English, captions",LANGUAGE="en",URI="subs.m3u8"
        #EXT-X-STREAM-INF:BANDWIDTH=200,CODECS="avc1.42c00a,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"
        high.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=100,CODECS="avc1.42c00a,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"
        low.m3u8
        #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=10,URI="iframes.m3u8"

        """

    static func filtered(keeping names: Set<String>) throws -> String {
        let data = try MasterPlaylistFilter.filter(Data(text.utf8), url: url) { names.contains($0.lastPathComponent) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func keepsOnlyAvailableVariantsAndRenditionsAndDropsEmptyGroups() throws {
        let result = try Self.filtered(keeping: ["low.m3u8", "en.m3u8"])
        let master = try #require(try PlaylistParser.parse(result, url: Self.url).master)
        #expect(master.variants.map(\.url.lastPathComponent) == ["low.m3u8"])
        #expect(master.variants[0].audioGroup == "aud" && master.variants[0].subtitlesGroup == nil)
        #expect(master.variants[0].codecs == ["avc1.42c00a", "mp4a.40.2"], "quoted commas survive")
        #expect(master.renditions.map(\.language) == ["en"])
        #expect(master.iFramePlaylistURLs.isEmpty)
        #expect(result.hasPrefix("#EXTM3U\r\n"), "other bytes stay")
    }

    @Test func everythingAvailableOrNothingAvailableIsUnchanged() throws {
        let all: Set = ["high.m3u8", "low.m3u8", "en.m3u8", "fr.m3u8", "subs.m3u8", "iframes.m3u8"]
        #expect(try Self.filtered(keeping: all) == Self.text)
        #expect(try Self.filtered(keeping: ["en.m3u8"]) == Self.text, "no variant left: unchanged")
    }

    @Test func mediaPlaylistsAreUnchangedAndMalformedOnesThrow() throws {
        let media = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\na.ts\n#EXT-X-ENDLIST\n"
        #expect(try MasterPlaylistFilter.filter(Data(media.utf8), url: Self.url) { _ in false } == Data(media.utf8))
        #expect(throws: PlaylistError.self) {
            try MasterPlaylistFilter.filter(
                Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=x\nv.m3u8\n".utf8), url: Self.url
            ) {
                _ in true
            }
        }
    }
}
