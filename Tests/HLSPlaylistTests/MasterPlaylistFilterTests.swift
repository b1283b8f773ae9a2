import Foundation
import HLSPlaylist
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

    /// Apple-style master: one video playlist listed once per audio group.
    /// A download of the first variant with English keeps v.m3u8 and aac-en.m3u8.
    @Test func aVariantSharingTheKeptPlaylistIsNotOfferedWithoutItsAudio() throws {
        let url = URL(string: "https://cdn.example.com/a/master.m3u8")!
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="aac-en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="ec3",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="ec3-en.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=1000000,CODECS="avc1.640028,mp4a.40.2",AUDIO="aac"
            v.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=1400000,CODECS="avc1.640028,ec-3",AUDIO="ec3"
            v.m3u8

            """
        let kept: Set = ["v.m3u8", "aac-en.m3u8"]
        let data = try MasterPlaylistFilter.filter(Data(text.utf8), url: url) { kept.contains($0.lastPathComponent) }
        let master = try #require(try PlaylistParser.parse(data, url: url).master)
        // It served a 1.4 Mb/s variant with no AUDIO group (video-only v.m3u8,
        // CODECS still ec-3): a player picking the highest bandwidth played it silent.
        #expect(master.variants.map(\.audioGroup) == ["aac"], "\(String(decoding: data, as: UTF8.self))")
        // Downloaded with no audio at all (`audio: .none`): the variants stay, without the group.
        let none = try MasterPlaylistFilter.filter(Data(text.utf8), url: url) { $0.lastPathComponent == "v.m3u8" }
        let bare = try #require(try PlaylistParser.parse(none, url: url).master)
        #expect(bare.variants.count == 2 && bare.variants.allSatisfy { $0.audioGroup == nil })
    }
}
