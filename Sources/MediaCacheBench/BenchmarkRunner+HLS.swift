import Foundation
import LoopbackNginx
import MediaDownloads
import MediaHLS
import MediaServer
import MediaStore
import MediaStreaming

extension BenchmarkRunner {
    /// Issue 10's figures: an HLS asset (a master, one media playlist,
    /// segments of random bytes) on a loopback nginx. Download with
    /// `HLSDownloader` (4 segments at once) into a fresh store against plain
    /// sequential GETs of the same files with the same HTTP client; then,
    /// with nginx stopped, offline playback start through `MediaServer`
    /// (master playlist requested to first segment byte) and the origin
    /// requests a whole offline playback makes.
    func runHLS() throws {
        let segments = options.quick ? 60 : 200
        let segmentBytes = options.quick ? 128 << 10 : 256 << 10
        let total = segments * segmentBytes
        log("hls: \(segments) segments of \(segmentBytes >> 10) KiB (\(total / 1_000_000) MB)")
        let web = try freshDirectory("hls-www")
        defer { remove(web) }
        var rng = SplitMix64(seed: Workloads.largeSeed ^ 0x4815)
        var media = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments {
            // Random payload behind an MPEG-TS packet header (the PAT every
            // segment starts with), as real `.ts` segments begin.
            var segment = Workloads.randomData(segmentBytes, &rng)
            segment.replaceSubrange(0..<4, with: [0x47, 0x40, 0x00, 0x10])
            try segment.write(to: web.appendingPathComponent("s\(index).ts"))
            media += "#EXTINF:2.0,\ns\(index).ts\n"
        }
        media += "#EXT-X-ENDLIST\n"
        try Data(media.utf8).write(to: web.appendingPathComponent("media.m3u8"))
        try Data("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000000\nmedia.m3u8\n".utf8)
            .write(to: web.appendingPathComponent("master.m3u8"))
        let nginx: LoopbackNginx
        do {
            nginx = try LoopbackNginx(
                serving: web, in: try freshDirectory("hls-nginx"), accessLog: false,
                httpDirectives: "keepalive_requests 100000;")
        } catch {
            note("hls: skipped, \(error)")
            return
        }
        defer { nginx.stop() }
        let master = nginx.url("master.m3u8")
        let files = ["master.m3u8", "media.m3u8"] + (0..<segments).map { "s\($0).ts" }

        // 1. Download against sequential GETs.
        var downloadSeconds: [Double] = []
        var plainSeconds: [Double] = []
        var kept: (MediaStore, URL)?
        for repetition in 0..<workloads.repetitions {
            let plain = try Self.blocking { () async throws -> Double in
                let origin = HTTPOrigin()
                let start = Stopwatch.now()
                for name in files {
                    let response = try await origin.fetch(OriginRequest(url: nginx.url(name)))
                    for try await _ in response.body {}
                }
                return BenchmarkRunner.seconds(since: start)
            }
            plainSeconds.append(plain)
            let directory = try freshDirectory("hls-store-\(repetition)")
            let store = try MediaStore(directory: directory)
            let cache = StreamingCache(store: store)
            let (seconds, progress) = try Self.blocking { () async throws -> (Double, DownloadProgress) in
                let start = Stopwatch.now()
                let download = HLSDownloader(cache: cache, parallelFetches: 4).download(master)
                try await download.completion()
                return (BenchmarkRunner.seconds(since: start), download.snapshot)
            }
            verify(
                progress.segments == segments && progress.bytes >= total,
                "hls: downloaded \(progress.segments) segments, \(progress.bytes) bytes")
            downloadSeconds.append(seconds)
            if let (old, oldDirectory) = kept {
                old.close()
                remove(oldDirectory)
            }
            kept = (store, directory)
        }
        let download = Stopwatch.median(downloadSeconds)
        let plain = Stopwatch.median(plainSeconds)
        record(
            "hls: download of \(segments) segments (\(total / 1_000_000) MB) on loopback, 4 at once",
            unit: "segments/s (higher is better)", engine: Double(segments) / download,
            baselines: [("sequential GETs of the same files, same client", Double(segments) / plain)])
        record(
            "hls: download of \(segments) segments (\(total / 1_000_000) MB) on loopback, 4 at once",
            unit: BenchResult.megabytesPerSecond, engine: Self.megabytesPerSecond(total, download),
            baselines: [("sequential GETs of the same files, same client", Self.megabytesPerSecond(total, plain))])

        // 2. Offline: nginx stopped, the store of the last download.
        guard let (store, directory) = kept else { return }
        defer {
            store.close()
            remove(directory)
        }
        // The player's HTTP client is warmed on the origin first (URLSession
        // and libcurl set themselves up on a first request), so that the
        // first start measures the server's first-time costs, not the client's.
        let client = HTTPOrigin()
        try Self.blocking { () async throws in
            for try await _ in try await client.fetch(OriginRequest(url: master)).body {}
        }
        nginx.stop()
        let cache = StreamingCache(store: store)
        let resources = HLSResourceStore(cache: cache)
        let server = MediaServer(resources: resources)
        try server.start()
        defer { server.stop() }
        let local = server.hlsURL(for: master)
        let originBefore = resources.originRequests
        let starts = try Self.blocking { () async throws -> [Double] in
            func text(_ url: URL) async throws -> String {
                var body = Data()
                for try await piece in try await client.fetch(OriginRequest(url: url)).body { body.append(piece) }
                return String(decoding: body, as: UTF8.self)
            }
            func firstURI(_ playlist: String) -> URL? {
                playlist.split(separator: "\n").first { !$0.hasPrefix("#") }.flatMap { URL(string: String($0)) }
            }
            var starts: [Double] = []
            for _ in 0..<50 {
                let start = Stopwatch.now()
                guard let mediaURL = firstURI(try await text(local)), let segment = firstURI(try await text(mediaURL))
                else { throw CocoaError(.fileReadCorruptFile) }
                var iterator = try await client.fetch(OriginRequest(url: segment)).body.makeAsyncIterator()
                _ = try await iterator.next()
                starts.append(BenchmarkRunner.seconds(since: start) * 1000)
            }
            // A whole offline playback: every segment through the server.
            guard let mediaURL = firstURI(try await text(local)) else { throw CocoaError(.fileReadCorruptFile) }
            for line in try await text(mediaURL).split(separator: "\n") where !line.hasPrefix("#") {
                for try await _ in try await client.fetch(OriginRequest(url: URL(string: String(line))!)).body {}
            }
            return starts
        }
        record(
            BenchResult(
                name: "hls: offline playback start through MediaServer, first after the server started "
                    + "(master requested to first segment byte; playlists read and rewritten; client warmed on the origin)",
                unit: "ms (lower is better)", value: starts[0]))
        record(
            BenchResult(
                name: "hls: offline playback start through MediaServer, again (median of 49 more starts)",
                unit: "ms (lower is better)", value: Stopwatch.median(Array(starts.dropFirst()))))
        record(
            BenchResult(
                name: "hls: origin requests during a whole offline playback (nginx stopped)",
                unit: "requests (lower is better)", value: Double(resources.originRequests - originBefore)))
        verify(resources.originRequests == originBefore, "hls: offline playback reached the origin")
    }
}
