import Foundation
import HLSPlaylist
import Testing

@Suite("HLS content types")
struct HLSContentTypeTests {
    static func type(_ path: String, _ kind: HLSResourceKind, _ media: Rendition.MediaType? = nil) -> String {
        HLSContentType.mimeType(for: URL(string: "https://example.com/" + path)!, kind: kind, mediaType: media)
    }

    @Test("Playlists and keys go by kind, whatever their URL")
    func byKind() {
        #expect(Self.type("master.m3u8", .masterPlaylist) == "application/vnd.apple.mpegurl")
        #expect(Self.type("index?x=1", .mediaPlaylist) == "application/vnd.apple.mpegurl")
        #expect(Self.type("trick.txt", .iFramePlaylist) == "application/vnd.apple.mpegurl")
        #expect(Self.type("key.ts", .key) == "application/octet-stream")
    }

    @Test("Segments and init segments go by extension, MP4 by track")
    func byExtension() {
        #expect(Self.type("a/seg1.ts?token=9", .segment) == "video/mp2t")
        #expect(Self.type("seg1.TS", .segment, .audio) == "video/mp2t")
        #expect(Self.type("seg1.aac", .segment, .audio) == "audio/aac")
        #expect(Self.type("seg1.m4s", .segment) == "video/mp4")
        #expect(Self.type("seg1.m4s", .segment, .audio) == "audio/mp4")
        #expect(Self.type("init.mp4", .initializationSegment) == "video/mp4")
        #expect(Self.type("init.mp4", .initializationSegment, .audio) == "audio/mp4")
        #expect(Self.type("seg.m4a", .segment) == "audio/mp4")
        #expect(Self.type("seg.cmfv", .segment) == "video/mp4")
        #expect(Self.type("sub0.vtt", .segment, .subtitles) == "text/vtt")
        #expect(Self.type("sub0.webvtt", .segment) == "text/vtt")
        #expect(Self.type("x.mp3", .segment, .audio) == "audio/mpeg")
        #expect(Self.type("x.ec3", .segment, .audio) == "audio/eac3")
    }

    @Test("Without a known extension: subtitles are WebVTT, init segments MP4, the rest binary")
    func fallback() {
        #expect(Self.type("sub/42", .segment, .subtitles) == "text/vtt")
        #expect(Self.type("init", .initializationSegment, .audio) == "audio/mp4")
        #expect(Self.type("init", .initializationSegment) == "video/mp4")
        #expect(Self.type("segment/42", .segment) == "application/octet-stream")
    }
}
