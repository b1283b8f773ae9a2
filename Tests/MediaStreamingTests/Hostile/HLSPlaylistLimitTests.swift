import Foundation
import HLSPlaylist
import MediaStore
import Testing

@testable import MediaHLS
@testable import MediaStreaming

/// Playlists from a hostile origin are bounded (``PlaylistLimits``): in
/// bytes (the fetch stops reading there), line length, segments, variants
/// and renditions. One just over a limit is refused with
/// ``PlaylistError/Reason/tooLarge(_:limit:)`` naming it; one at the limit
/// is read.
@Suite("Hostile origin: HLS playlist limits", .timeLimit(.minutes(1)))
struct HLSPlaylistLimitTests {
    static let url = URL(string: "https://example.invalid/hls/playlist.m3u8")!

    /// A VOD media playlist of `segments` 5-second segments.
    static func media(segments: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:5\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments { text += "#EXTINF:5.0,\nsegment\(index).ts\n" }
        return text + "#EXT-X-ENDLIST\n"
    }

    /// A master playlist of `variants` variants and `renditions` audio renditions.
    static func master(variants: Int, renditions: Int) -> String {
        var text = "#EXTM3U\n"
        for index in 0..<renditions {
            text += "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\(index)\",URI=\"audio\(index).m3u8\"\n"
        }
        for index in 0..<variants {
            text += "#EXT-X-STREAM-INF:BANDWIDTH=\(1000 + index)\nvariant\(index).m3u8\n"
        }
        return text
    }

    static func refusal(_ text: String, _ limits: PlaylistLimits) -> PlaylistError.Reason? {
        do {
            _ = try PlaylistParser.parse(text, url: url, limits: limits)
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("20,000 segments (the default) are read; 20,001 are refused")
    func segments() {
        #expect(Self.refusal(Self.media(segments: 20_000), PlaylistLimits()) == nil)
        #expect(Self.refusal(Self.media(segments: 20_001), PlaylistLimits()) == .tooLarge(.segments, limit: 20_000))
    }

    @Test("A playlist of exactly maxBytes is read; one byte more is refused")
    func bytes() {
        let text = Self.media(segments: 100)
        let count = text.utf8.count
        #expect(Self.refusal(text, PlaylistLimits(maxBytes: count)) == nil)
        #expect(Self.refusal(text, PlaylistLimits(maxBytes: count - 1)) == .tooLarge(.bytes, limit: count - 1))
        #expect(throws: PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: count - 1))) {
            try PlaylistRewriter.rewrite(
                Data(text.utf8), url: Self.url, byteRanges: .remove, limits: PlaylistLimits(maxBytes: count - 1)
            ) { _ in nil }
        }
    }

    @Test("A line of exactly maxLineBytes is read; one byte more is refused, at its line")
    func lineBytes() throws {
        let line = "#" + String(repeating: "x", count: 99)
        let text = "#EXTM3U\n\(line)\n#EXT-X-TARGETDURATION:5\n#EXT-X-ENDLIST\n"
        #expect(Self.refusal(text, PlaylistLimits(maxLineBytes: 100)) == nil)
        let error = #expect(throws: PlaylistError.self) {
            try PlaylistParser.parse(text, url: Self.url, limits: PlaylistLimits(maxLineBytes: 99))
        }
        #expect(error == PlaylistError(line: 2, reason: .tooLarge(.lineBytes, limit: 99)))
    }

    @Test("Variants and renditions at their limits are read; one more of each is refused")
    func variantsAndRenditions() {
        let limits = PlaylistLimits(maxVariants: 10, maxRenditions: 5)
        #expect(Self.refusal(Self.master(variants: 10, renditions: 5), limits) == nil)
        #expect(Self.refusal(Self.master(variants: 11, renditions: 5), limits) == .tooLarge(.variants, limit: 10))
        #expect(Self.refusal(Self.master(variants: 10, renditions: 6), limits) == .tooLarge(.renditions, limit: 5))
    }

    @Test("A playlist body over maxBytes is refused while read; the fetch stops there, nothing is kept")
    func fetchStopsAtTheByteLimit() async throws {
        let limit = 1 << 20
        let origin = try ScriptedOrigin { _, reply in
            guard reply.head(status: 200) else { return }
            reply.flood(total: 64 << 20, piece: 64 << 10)
        }
        defer { origin.stop() }
        let test = try TestCache()
        let cache = StreamingCache(
            store: test.store, origin: HTTPOrigin(timeout: .seconds(4.75)),
            configuration: StreamingConfiguration(
                retryPolicy: RetryPolicy(maxRetries: 0), hlsLimits: HLSLimits(playlist: PlaylistLimits(maxBytes: limit))
            ))
        let resources = HLSResourceStore(cache: cache)
        let url = origin.url("/huge.m3u8")
        let resource = HLSResource(
            kind: .mediaPlaylist, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: url)
        let error = await #expect(throws: HLSResourceError.self) {
            _ = try await resources.data(for: resource, metadata: EntryMetadata())
        }
        #expect(error == .playlist(url: url, PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: limit))))
        #expect(try test.store.entries().isEmpty)
    }

    @Test("A playlist announcing more than maxBytes is refused before its body")
    func announcedOverTheByteLimit() async throws {
        let origin = try ScriptedOrigin { _, reply in
            reply.head(status: 200, headers: ["Content-Length": "\(5 << 20)"])
        }
        defer { origin.stop() }
        let test = try TestCache()
        let cache = StreamingCache(
            store: test.store, origin: HTTPOrigin(timeout: .seconds(4.75)),
            configuration: StreamingConfiguration(retryPolicy: RetryPolicy(maxRetries: 0)))
        let resources = HLSResourceStore(cache: cache)
        let url = origin.url("/announced.m3u8")
        let resource = HLSResource(
            kind: .masterPlaylist, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let error = await #expect(throws: HLSResourceError.self) {
            _ = try await resources.data(for: resource, metadata: EntryMetadata())
        }
        #expect(error == .playlist(url: url, PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: 4 << 20))))
    }
}
