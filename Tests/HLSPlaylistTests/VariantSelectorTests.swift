import Foundation
import HLSPlaylist
import Testing

@Suite("HLS variant and rendition selection")
struct VariantSelectorTests {
    static let master = try! #require(
        try PlaylistParser.parse(
            """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="English",LANGUAGE="en",DEFAULT=YES,AUTOSELECT=YES,URI="hi/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="English (US)",LANGUAGE="en-US",AUTOSELECT=YES,URI="hi/en-us.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="Português",LANGUAGE="pt-BR",AUTOSELECT=YES,URI="hi/pt.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="Français",LANGUAGE="fr",URI="hi/fr.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="Muxed",LANGUAGE="en"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="Deutsch",LANGUAGE="de",AUTOSELECT=YES,URI="lo/de.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English",LANGUAGE="en",URI="subs/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Español",LANGUAGE="es",DEFAULT=YES,URI="subs/es.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,AUDIO="hi",SUBTITLES="subs"
            mid.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2500000,AUDIO="hi",SUBTITLES="subs"
            high.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=300000,AUDIO="lo"
            low.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2500000,AUDIO="hi"
            high-twin.m3u8
            """, url: URL(string: "https://example.com/a/master.m3u8")!
        ).master)

    @Test("Variant choices: first, highest bandwidth ≤ N, highest and lowest overall, by predicate")
    func variants() throws {
        func pick(_ choice: VariantChoice) throws -> String {
            try VariantSelector.select(from: Self.master, variant: choice).variant.url.lastPathComponent
        }
        #expect(try pick(.first) == "mid.m3u8")
        #expect(try pick(.highestBandwidth(atMost: 1_000_000)) == "mid.m3u8")
        #expect(try pick(.highestBandwidth(atMost: 800_000)) == "mid.m3u8")
        #expect(try pick(.highestBandwidth(atMost: 799_999)) == "low.m3u8")
        #expect(try pick(.highestBandwidth()) == "high.m3u8", "of equal bandwidths, the first listed")
        #expect(try pick(.lowestBandwidth) == "low.m3u8")
        #expect(try pick(.highestBandwidth { $0.subtitlesGroup == nil }) == "high-twin.m3u8")
        #expect(throws: SelectionError.noMatchingVariant) { try pick(.highestBandwidth(atMost: 1000)) }
        let empty = MasterPlaylist(url: URL(string: "https://example.com/m.m3u8")!, variants: [])
        #expect(throws: SelectionError.noVariants) { try VariantSelector.select(from: empty) }
    }

    @Test("Automatic audio is the group's DEFAULT, else its first AUTOSELECT; subtitles default to none")
    func automatic() throws {
        let mid = try VariantSelector.select(from: Self.master)
        #expect(mid.audio.map(\.name) == ["English"])
        #expect(mid.subtitles.isEmpty)
        let low = try VariantSelector.select(from: Self.master, variant: .lowestBandwidth)
        #expect(low.audio.map(\.name) == ["Deutsch"])
        let subtitled = try VariantSelector.select(from: Self.master, subtitles: .automatic)
        #expect(subtitled.subtitles.map(\.name) == ["Español"])
    }

    @Test("Languages: exact match first, then a primary-tag match; case ignored; in the order asked; repeats once")
    func languages() throws {
        let selection = try VariantSelector.select(
            from: Self.master, audio: .languages(["FR", "pt", "en-us", "en", "fr"]), subtitles: .languages(["en"]))
        #expect(selection.audio.map(\.name) == ["Français", "Português", "English (US)", "English"])
        #expect(selection.subtitles.map(\.name) == ["English"])
        #expect(
            selection.mediaPlaylistURLs.map(\.path) == [
                "/a/mid.m3u8", "/a/hi/fr.m3u8", "/a/hi/pt.m3u8", "/a/hi/en-us.m3u8", "/a/hi/en.m3u8", "/a/subs/en.m3u8",
            ])
    }

    @Test("A language the group lacks, or a group the variant lacks, is a typed error")
    func unavailable() {
        #expect(throws: SelectionError.languageUnavailable(type: .audio, language: "it", groupID: "hi")) {
            try VariantSelector.select(from: Self.master, audio: .languages(["it"]))
        }
        #expect(throws: SelectionError.languageUnavailable(type: .subtitles, language: "en", groupID: nil)) {
            try VariantSelector.select(from: Self.master, variant: .lowestBandwidth, subtitles: .languages(["en"]))
        }
        #expect(throws: SelectionError.languageUnavailable(type: .audio, language: "e", groupID: "hi")) {
            try VariantSelector.select(from: Self.master, audio: .languages(["e"]))
        }
    }

    @Test("All, none; a rendition without URI (muxed) is selected but adds no playlist")
    func allAndNone() throws {
        let all = try VariantSelector.select(from: Self.master, variant: .lowestBandwidth, audio: .all)
        #expect(all.audio.map(\.name) == ["Muxed", "Deutsch"])
        #expect(all.mediaPlaylistURLs.map(\.lastPathComponent) == ["low.m3u8", "de.m3u8"])
        let none = try VariantSelector.select(from: Self.master, audio: .none)
        #expect(none.audio.isEmpty && none.mediaPlaylistURLs.map(\.lastPathComponent) == ["mid.m3u8"])
        let muxed = try VariantSelector.select(from: Self.master, variant: .lowestBandwidth, audio: .languages(["en"]))
        #expect(muxed.audio.map(\.name) == ["Muxed"] && muxed.mediaPlaylistURLs.count == 1)
    }
}
