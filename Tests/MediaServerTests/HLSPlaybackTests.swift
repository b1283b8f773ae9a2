import Foundation
import MediaHLS
import MediaServer
import MediaStore
import MediaStreaming
import Testing

/// HLS through the server with real nginx, ffmpeg and ffprobe: playlists
/// rewritten to local URLs with the right content types, offline playback
/// of a download with nginx stopped and no origin request, play while
/// downloading with each resource fetched once.
@Suite("MediaServer HLS with ffmpeg", .serialized, .timeLimit(.minutes(3)))
struct HLSPlaybackTests {
    /// ffmpeg decodes `input` (with `arguments` after `-i`); the seconds it reached and the video frames.
    static func decode(_ input: String, _ arguments: [String] = []) async throws -> (seconds: Double, frames: Int)? {
        let outcome = try await FFmpeg.run(
            "ffmpeg", ["-v", "error", "-stats", "-i", input] + arguments + ["-f", "null", "-"])
        guard outcome.status == 0, !outcome.errors.contains("rror") else {
            // Said where a failed expectation cannot: why ffmpeg gave up.
            let said = outcome.errors.suffix(2_000)
            FileHandle.standardError.write(Data("ffmpeg -i \(input): status \(outcome.status): \(said)\n".utf8))
            return nil
        }
        let last = outcome.errors.components(separatedBy: "\r").filter { $0.contains("time=") }.last ?? ""
        guard let time = last.components(separatedBy: "time=").last?.split(separator: " ").first else { return nil }
        let parts = time.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { return nil }
        let frames = last.components(separatedBy: "frame=").dropFirst().first.flatMap {
            Int($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        }
        return (parts[0] * 3600 + parts[1] * 60 + parts[2], frames ?? 0)
    }

    /// GETs `url` from the server (no origin involved): status, content type, body.
    static func get(_ url: URL) async throws -> (status: Int, type: String?, body: Data) {
        let response = try await HTTPOrigin(timeout: .seconds(10)).fetch(OriginRequest(url: url))
        var body = Data()
        for try await piece in response.body { body.append(piece) }
        return (response.statusCode, response.header("Content-Type"), body)
    }

    /// The URIs of a playlist's text: URI lines and `URI="…"` attributes.
    static func uris(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).flatMap { line -> [String] in
            if !line.hasPrefix("#") { return [String(line)] }
            guard let start = line.range(of: "URI=\"") else { return [] }
            return [String(line[start.upperBound...].prefix { $0 != "\"" })]
        }
    }

    @Test(
        "offline: the downloaded variant and audio decode in full through the server with nginx stopped, zero origin requests"
    )
    func offlinePlaybackOfADownload() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let download = HLSDownloader(resources: fixture.server.resources).download(
            master, variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .all)
        try await download.completion()
        fixture.nginx.stop()
        let before = fixture.origin.requestCount
        let local = fixture.server.hlsURL(for: master).absoluteString
        let probe = try await FFmpeg.run(
            "ffprobe",
            [
                "-v", "error", "-show_entries", "stream=codec_type:stream_tags=language,variant_bitrate", "-of",
                "csv=p=0", local,
            ])
        #expect(probe.status == 0)
        // The downloaded selection only: the low variant's video and the English audio.
        // (ffprobe prints each stream under its program and again on its own.)
        let streams = Set(probe.output.split(whereSeparator: \.isNewline).map(String.init))
        #expect(streams.contains("video,59400") && streams.contains { $0.hasPrefix("audio") && $0.hasSuffix(",en") })
        #expect(!probe.output.contains("92400") && !probe.output.contains(",fr"), "\(probe.output)")
        // The whole 4 s, 15 frames a second.
        let decoded = try #require(try await Self.decode(local, ["-map", "0:v:0", "-map", "0:a:0"]))
        #expect(decoded.seconds >= 3.9 && decoded.frames == 60, "\(decoded)")
        #expect(fixture.origin.requestCount == before, "no origin request with nginx stopped")
    }

    @Test("every URI of the served playlists is a local URL; each resource has its content type and exact bytes")
    func rewrittenPlaylistsAndContentTypes() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        try await HLSDownloader(resources: fixture.server.resources).download(master, audio: .all, subtitles: .all)
            .completion()
        fixture.nginx.stop()
        let base = "http://127.0.0.1:\(fixture.port)/\(fixture.server.secret)/h/"
        var pending = [fixture.server.hlsURL(for: master)]
        var seen: Set<URL> = []
        var types: [String: String] = [:]
        while let url = pending.popLast() {
            guard seen.insert(url).inserted else { continue }
            let (status, type, body) = try await Self.get(url)
            #expect(status == 200, "\(url)")
            let name = url.lastPathComponent
            types[(name as NSString).pathExtension] = type
            if name.hasSuffix(".m3u8") {
                #expect(type == "application/vnd.apple.mpegurl")
                let text = String(decoding: body, as: UTF8.self)
                let uris = Self.uris(text)
                #expect(!uris.isEmpty && uris.allSatisfy { $0.hasPrefix(base) }, "\(text)")
                pending += uris.compactMap(URL.init(string:))
            } else {
                let file = ServerFixture.fixtures.appendingPathComponent("HLS/master/" + name)
                #expect(body == (try Data(contentsOf: file)), "\(name)")
            }
        }
        // The master, the downloaded selection's 4 media playlists (high, English,
        // French, subtitles), 2 video, 6 audio and 2 subtitle segments.
        let expectedCount = 15
        #expect(seen.count == expectedCount)
        #expect(types == ["m3u8": "application/vnd.apple.mpegurl", "ts": "video/mp2t", "vtt": "text/vtt"])
    }

    @Test("offline: AES-128, fMP4 with EXT-X-MAP and single-file byte ranges decode in full through the server")
    func offlineKeysInitSegmentsAndByteRanges() async throws {
        let fixture = try ServerFixture()
        let downloader = HLSDownloader(resources: fixture.server.resources)
        let assets = ["aes/media.m3u8", "fmp4/media.m3u8", "byterange/fmp4.m3u8", "byterange/ts.m3u8"]
        for asset in assets { try await downloader.download(fixture.originURL("HLS/" + asset)).completion() }
        fixture.nginx.stop()
        let before = fixture.origin.requestCount
        for asset in assets {
            let local = fixture.server.hlsURL(for: fixture.originURL("HLS/" + asset)).absoluteString
            let decoded = try #require(try await Self.decode(local), "\(asset)")
            #expect(decoded.seconds >= 3.9 && decoded.frames == 60, "\(asset): \(decoded)")
        }
        #expect(fixture.origin.requestCount == before)
        // The fMP4 init segment is served as MP4, each byte range exactly.
        let text = String(
            decoding: try await Self.get(fixture.server.hlsURL(for: fixture.originURL("HLS/byterange/fmp4.m3u8"))).body,
            as: UTF8.self)
        #expect(!text.contains("BYTERANGE"))
        let map = try #require(Self.uris(text).first.flatMap(URL.init(string:)))
        let (_, type, body) = try await Self.get(map)
        #expect(type == "video/mp4")
        #expect(body == (try ServerFixture.fixture("HLS/byterange/fmp4.mp4")).prefix(1355))
    }

    @Test("play while downloading: ffmpeg plays as the download runs; every resource is fetched from the origin once")
    func playWhileDownloading() async throws {
        // A slowed origin, so that the player and the download overlap.
        let fixture = try ServerFixture(delayPerPiece: .milliseconds(40))
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)
        let local = fixture.server.hlsURL(for: master).absoluteString
        let download = downloader.download(master, variant: .first, audio: .languages(["en"]))
        async let played = Self.decode(local, ["-map", "0:v:0", "-map", "0:a:0"])
        try await download.completion()
        let decoded = try #require(try await played)
        #expect(decoded.seconds >= 3.9 && decoded.frames == 60, "\(decoded)")
        let requested = fixture.origin.requestedResources
        #expect(Set(requested).count == requested.count, "a resource fetched twice: \(requested)")
        let plan = try #require(download.plan)
        #expect(Set(plan.resources.map { $0.url.path }).isSubset(of: Set(requested)))
        // Everything is kept pinned, whoever fetched it.
        for resource in plan.resources {
            #expect(try fixture.store.info(forKey: resource.cacheKey.storeKey)?.isPinned == true)
        }
        fixture.nginx.stop()
        let before = fixture.origin.requestCount
        let again = try #require(try await Self.decode(local, ["-map", "0:v:0", "-map", "0:a:0"]))
        #expect(again.frames == 60)
        #expect(fixture.origin.requestCount == before)
    }

    @Test("a live playlist plays through the server but is never kept")
    func livePlaylistIsPassedThrough() async throws {
        let fixture = try ServerFixture()
        let root = fixture.directory.appendingPathComponent("root/HLS/ts/live.m3u8")
        try Data("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nsegment0.ts\n".utf8).write(to: root)
        let live = fixture.originURL("HLS/ts/live.m3u8")
        let (status, type, body) = try await Self.get(fixture.server.hlsURL(for: live))
        #expect(status == 200 && type == "application/vnd.apple.mpegurl")
        #expect(String(decoding: body, as: UTF8.self).contains("/h/"))
        #expect(try fixture.store.info(forKey: live.absoluteString) == nil)
        _ = try await Self.get(fixture.server.hlsURL(for: live))
        #expect(fixture.origin.requestedResources.filter { $0.hasSuffix("live.m3u8") }.count == 2)
    }
}
