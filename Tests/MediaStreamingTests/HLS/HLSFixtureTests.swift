import Foundation
import HLSPlaylist
import MediaStreaming
import Testing

/// The ffmpeg-made assets under Fixtures/HLS (Tools/make-fixtures hls):
/// each parses, plans as expected, and adds up to what ffprobe decodes.
@Suite("HLS fixtures")
struct HLSFixtureTests {
    static func url(_ path: String) -> URL { Fixtures.directory.appendingPathComponent("HLS/" + path) }

    static func playlist(_ url: URL) throws -> Playlist {
        try PlaylistParser.parse(try Data(contentsOf: url), url: url)
    }

    static func media(_ path: String) throws -> MediaPlaylist { try #require(try playlist(url(path)).media) }

    /// What ffprobe decodes from a playlist on disk, in seconds
    /// (`-allowed_extensions ALL` lets its HLS demuxer open `enc.key`).
    static func probedDuration(_ url: URL) throws -> Double {
        let (status, text) = try runTool([
            "ffprobe", "-v", "error", "-allowed_extensions", "ALL", "-show_entries", "format=duration", "-of",
            "csv=p=0", url.path,
        ])
        guard status == 0, let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw FixtureFailure(message: "ffprobe cannot read \(url.path): \(text)") }
        return seconds
    }

    /// Every resource of `plan` is on disk, its byte range inside the file.
    static func expectOnDisk(_ plan: HLSDownloadPlan, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for resource in plan.resources {
            let size = try #require(
                try FileManager.default.attributesOfItem(atPath: resource.url.path)[.size] as? Int,
                sourceLocation: sourceLocation)
            if let range = resource.byteRange { #expect(range.end <= size, sourceLocation: sourceLocation) }
        }
    }

    @Test("master.m3u8: two variants, English and French audio, English subtitles; plan of the low variant")
    func master() throws {
        let master = try #require(try Self.playlist(Self.url("master/master.m3u8")).master)
        #expect(master.variants.map(\.bandwidth) == [92400, 59400])
        #expect(
            master.variants.map(\.resolution) == [
                Resolution(width: 160, height: 90), Resolution(width: 96, height: 54),
            ])
        #expect(master.renditions.map(\.type) == [.audio, .audio, .subtitles])
        #expect(master.renditions.map(\.language) == ["en", "fr", "en"])
        #expect(master.renditions[2].name == "English, captions")

        let selection = try VariantSelector.select(
            from: master, variant: .highestBandwidth(atMost: 70000), audio: .languages(["en", "fr"]),
            subtitles: .automatic)
        #expect(selection.variant.url.lastPathComponent == "low.m3u8")
        let playlists = try selection.mediaPlaylistURLs.map { try #require(try Self.playlist($0).media) }
        let plan = try HLSDownloadPlanner.plan(master: master, selection: selection, mediaPlaylists: playlists)
        #expect(
            plan.resources(of: .mediaPlaylist).map(\.url.lastPathComponent) == [
                "low.m3u8", "english.m3u8", "french.m3u8", "high_vtt.m3u8",
            ])
        #expect(plan.tracks.map(\.segmentCount) == [2, 3, 3, 2])
        #expect(plan.resources(of: .segment).count == 10)
        #expect(plan.resources(of: .key).isEmpty && plan.resources(of: .initializationSegment).isEmpty)
        #expect(plan.resources.first?.kind == .masterPlaylist)
        #expect(
            Set(plan.resources(of: .segment).filter { $0.mediaType == .subtitles }.map(\.url.pathExtension)) == ["vtt"])
        for track in plan.tracks where track.mediaType != .subtitles {
            let probed = try Self.probedDuration(track.playlistURL)
            #expect(
                abs(track.duration - probed) < 0.1,
                "\(track.playlistURL.lastPathComponent): \(track.duration) vs \(probed)")
        }
        try Self.expectOnDisk(plan)

        // Augment: French added to an English download adds its playlist and 3 segments.
        let english = try HLSDownloadPlanner.plan(
            master: master,
            selection: try VariantSelector.select(
                from: master, variant: .highestBandwidth(atMost: 70000), audio: .languages(["en"]),
                subtitles: .automatic), mediaPlaylists: playlists)
        let added = plan.missing(from: english.cacheKeys)
        #expect(added.map(\.url.lastPathComponent) == ["french.m3u8", "french_0.ts", "french_1.ts", "french_2.ts"])
    }

    @Test("master-ffmpeg.m3u8 (as ffmpeg wrote it) parses, with the same variants")
    func ffmpegMaster() throws {
        let master = try #require(try Self.playlist(Self.url("master/master-ffmpeg.m3u8")).master)
        #expect(master.variants.map(\.url.lastPathComponent) == ["high.m3u8", "low.m3u8"])
        #expect(master.variants.map(\.audioGroup) == ["group_audio", "group_audio"])
        #expect(master.renditions.map(\.url?.lastPathComponent) == ["english.m3u8", "french.m3u8", "high_vtt.m3u8"])
        #expect(master.renditions[2].language == nil)
    }

    @Test("ts/media.m3u8: four MPEG-TS segments, no keys or maps, durations as ffprobe decodes")
    func transportStream() throws {
        let media = try Self.media("ts/media.m3u8")
        let plan = try HLSDownloadPlanner.plan(media: media)
        #expect(plan.resources.map(\.kind) == [.mediaPlaylist, .segment, .segment, .segment, .segment])
        #expect(media.playlistType == .vod && media.hasEndList && media.targetDuration == 1)
        #expect(abs(media.duration - (try Self.probedDuration(media.url))) < 0.1)
        #expect(
            Set(plan.resources(of: .segment).map { HLSContentType.mimeType(for: $0.url, kind: $0.kind) }) == [
                "video/mp2t"
            ])
        try Self.expectOnDisk(plan)
    }

    @Test("fmp4/media.m3u8: one EXT-X-MAP, fetched once before four fMP4 segments")
    func fragmentedMP4() throws {
        let media = try Self.media("fmp4/media.m3u8")
        #expect(Set(media.segments.compactMap(\.map?.url.lastPathComponent)) == ["init.mp4"])
        #expect(media.segments.allSatisfy { $0.map?.byteRange == nil })
        let plan = try HLSDownloadPlanner.plan(media: media)
        #expect(
            plan.resources.map(\.kind) == [.mediaPlaylist, .initializationSegment]
                + Array(repeating: .segment, count: 4))
        #expect(abs(media.duration - (try Self.probedDuration(media.url))) < 0.1)
        #expect(HLSContentType.mimeType(for: plan.resources[1].url, kind: .initializationSegment) == "video/mp4")
        try Self.expectOnDisk(plan)
    }

    @Test("aes/media.m3u8: AES-128 with the committed key and IV, one key resource before the segments")
    func encrypted() throws {
        let media = try Self.media("aes/media.m3u8")
        let key = try #require(media.segments.first?.keys.first)
        #expect(media.segments.allSatisfy { $0.keys == [key] })
        #expect(key.method == .aes128 && key.keyFormat == "identity")
        #expect(
            key.initializationVector == [
                0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF,
            ])
        #expect(try Data(contentsOf: try #require(key.url)).count == 16)
        let plan = try HLSDownloadPlanner.plan(media: media)
        #expect(plan.resources.map(\.kind) == [.mediaPlaylist, .key] + Array(repeating: .segment, count: 4))
        // ffprobe decrypts with the key the playlist names.
        #expect(abs(media.duration - (try Self.probedDuration(media.url))) < 0.1)
        try Self.expectOnDisk(plan)
    }

    @Test("byterange/ts.m3u8: four sub-ranges of one file, contiguous, covering it, each its own cache key")
    func singleFileTS() throws {
        let media = try Self.media("byterange/ts.m3u8")
        let ranges = media.segments.compactMap(\.byteRange)
        #expect(ranges.count == 4 && Set(media.segments.map(\.url)).count == 1)
        #expect(ranges.first?.offset == 0)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.end == $1.offset })
        let size = try FileManager.default.attributesOfItem(atPath: media.segments[0].url.path)[.size] as? Int
        #expect(ranges.last?.end == size)
        let plan = try HLSDownloadPlanner.plan(media: media)
        #expect(Set(plan.resources(of: .segment).map(\.cacheKey)).count == 4)
        #expect(abs(media.duration - (try Self.probedDuration(media.url))) < 0.1)
    }

    @Test("byterange/fmp4.m3u8: the map and the segments are ranges of one file, the map first")
    func singleFileMP4() throws {
        let media = try Self.media("byterange/fmp4.m3u8")
        let map = try #require(media.segments.first?.map)
        #expect(map.byteRange?.offset == 0 && map.url == media.segments[0].url)
        let ranges = [try #require(map.byteRange)] + media.segments.compactMap(\.byteRange)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.end == $1.offset })
        let size = try FileManager.default.attributesOfItem(atPath: map.url.path)[.size] as? Int
        #expect(ranges.last?.end == size)
        let plan = try HLSDownloadPlanner.plan(media: media)
        #expect(plan.resources.map(\.byteRange).dropFirst() == ArraySlice(ranges.map { Optional($0) }))
        #expect(plan.cacheKeys.count == 6)
        #expect(abs(media.duration - (try Self.probedDuration(media.url))) < 0.1)
    }

    @Test("Every fixture playlist rewritten to local URLs parses back with every URL local and the same structure")
    func rewriteAll() throws {
        let paths = [
            "master/master.m3u8", "master/master-ffmpeg.m3u8", "master/high.m3u8", "master/low.m3u8",
            "master/english.m3u8", "master/french.m3u8", "master/high_vtt.m3u8", "ts/media.m3u8", "fmp4/media.m3u8",
            "aes/media.m3u8", "byterange/ts.m3u8", "byterange/fmp4.m3u8",
        ]
        for path in paths {
            let url = Self.url(path)
            let original = try Self.playlist(url)
            var count = 0
            let text = try PlaylistRewriter.rewrite(try Data(contentsOf: url), url: url, byteRanges: .keep) {
                reference in
                count += 1
                return URL(string: "http://127.0.0.1:8080/\(count)/" + reference.url.lastPathComponent)
            }
            let local = URL(string: "http://127.0.0.1:8080/playlist.m3u8")!
            let rewritten = try PlaylistParser.parse(text, url: local)
            switch (original, rewritten) {
            case (.master(let before), .master(let after)):
                #expect(
                    after.variants.count == before.variants.count && after.renditions.count == before.renditions.count)
                let urls = after.variants.map(\.url) + after.renditions.compactMap(\.url)
                #expect(urls.allSatisfy { $0.host == "127.0.0.1" } && urls.count == count, "\(path)")
            case (.media(let before), .media(let after)):
                #expect(after.segments.map(\.byteRange) == before.segments.map(\.byteRange), "\(path)")
                #expect(after.segments.map(\.duration) == before.segments.map(\.duration))
                let urls =
                    after.segments.map(\.url) + after.segments.compactMap(\.map?.url)
                    + after.segments.flatMap(\.keys).compactMap(\.url)
                #expect(urls.allSatisfy { $0.host == "127.0.0.1" }, "\(path)")
            default:
                Issue.record("\(path) changed kind")
            }
        }
    }
}
