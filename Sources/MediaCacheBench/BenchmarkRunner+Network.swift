import Foundation
import LoopbackNginx
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming

extension BenchmarkRunner {
    /// Issue 27's figures: downloads and plays over a shaped link (a
    /// one-way delay and a rate per connection, `--delay-ms`/`--rate`),
    /// against the tools users compare with, measured in the same run.
    ///
    /// nginx serves generated media (``NetworkAssets``) on loopback behind
    /// `Tools/shaping-proxy`; each measurement gets a proxy of its own on a
    /// fresh port, so that no client starts with a warm connection. nginx
    /// logs `$connection $connection_requests` per request: each row notes
    /// how many requests each tool sent per connection.
    ///
    /// Rows: an HLS download (ours, `HLSDownloader` with 4 fetches at once,
    /// against `yt-dlp -N 4`, `ffmpeg -c copy` and the link limit);
    /// progressive first play through the loader (time to first byte and to
    /// 10 s of audio, and a whole track, against `curl` through the same
    /// proxy); a seek in a half-cached track (against `curl` on a warm
    /// connection and on a new one: the loader's earlier transfer may still
    /// hold the warm one, so the new connection is the fair peer); a
    /// progressive offline download (ours over
    /// ``ProgressiveDownloadPerformer/defaultConnections`` connections)
    /// against `curl` and `aria2c -x 4`. A missing tool skips its
    /// rows, or fails the run when `MEDIACACHE_REQUIRE_TOOLS` is set.
    func runNetwork() throws {
        let shape = LinkShape(delay: options.networkDelayMilliseconds / 1000, rate: options.networkRate * 1e6)
        let requireTools = !(ProcessInfo.processInfo.environment["MEDIACACHE_REQUIRE_TOOLS"] ?? "").isEmpty
        func tool(_ name: String, for rows: String, alsoIn directories: [String] = []) -> ExternalTool? {
            if let found = ExternalTool.find(name) ?? ExternalTool.find(name, path: directories.joined(separator: ":"))
            {
                return found
            }
            let message = "network: \(name) not found (Tools/bootstrap installs it)"
            if requireTools {
                verify(false, message + " and MEDIACACHE_REQUIRE_TOOLS is set")
            } else {
                note(message + "; \(rows) skipped")
            }
            return nil
        }
        guard let python = tool("python3", for: "the whole group (it runs the shaping proxy)"),
            let ffmpeg = tool("ffmpeg", for: "the whole group (it makes the media)")
        else { return }
        guard let script = ShapingProxy.scriptPath() else {
            verify(!requireTools, "network: Tools/shaping-proxy not found (set MEDIACACHE_SHAPING_PROXY)")
            note(
                "network: Tools/shaping-proxy not found (run from the repository or set MEDIACACHE_SHAPING_PROXY); skipped"
            )
            return
        }
        let assets = try NetworkAssets.prepare(
            in: root.deletingLastPathComponent().appendingPathComponent("mediacache-bench-assets"),
            seconds: options.quick ? 60 : 300, offlineBytes: options.quick ? 20_000_000 : 100_000_000,
            ffmpeg: ffmpeg, log: log)
        let nginxDirectory = try freshDirectory("network-nginx")
        let originLog = nginxDirectory.appendingPathComponent("reuse.log")
        let nginx: LoopbackNginx
        do {
            nginx = try LoopbackNginx(
                serving: assets.root, in: nginxDirectory, accessLog: false,
                httpDirectives: "log_format reuse '$connection $connection_requests $status $body_bytes_sent';",
                serverDirectives: "access_log \(originLog.path) reuse;")
        } catch {
            note("network: skipped, \(error)")
            return
        }
        defer { nginx.stop() }
        let link = ShapedOrigin(
            python: python, script: script, nginx: nginx, log: originLog, shape: shape,
            scratch: try freshDirectory("network-proxy"))
        log("network: \(shape.description); HLS \(assets.hlsSegments) segments, \(assets.hlsBytes / 1_000_000) MB")
        note(
            "network: the link is Tools/shaping-proxy on loopback, \(shape.description) (each direction); a new connection's first bytes wait one round trip (the handshake)."
        )

        try networkHLS(
            assets, link: link,
            ytDLP: tool("yt-dlp", for: "the yt-dlp HLS row", alsoIn: python.userScripts(scratch: link.scratch)),
            ffmpeg: ffmpeg)
        let curl = tool("curl", for: "the curl rows")
        try networkFirstPlay(assets, link: link, curl: curl)
        try networkSeek(assets, link: link, curl: curl)
        try networkOffline(assets, link: link, curl: curl, aria2c: tool("aria2c", for: "the aria2c row"))
    }

    /// nginx behind a proxy per measurement, and nginx's log of requests per connection.
    struct ShapedOrigin {
        let python: ExternalTool
        let script: String
        let nginx: LoopbackNginx
        let log: URL
        let shape: LinkShape
        let scratch: URL

        /// A fresh proxy (bounded to 10 minutes), for one measurement.
        func proxy() throws -> ShapingProxy {
            try ShapingProxy(
                python: python, script: script, upstreamPort: nginx.port, shape: shape, lifetime: 600,
                scratch: scratch)
        }

        /// Lines nginx logged so far.
        func mark() -> Int { lines().count }

        /// Requests per connection that nginx logged since `mark`.
        func reuse(since mark: Int) -> ConnectionReuse { ConnectionReuse(lines: lines().dropFirst(mark)) }

        private func lines() -> [Substring] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n")
        }
    }

    /// Runs `body` with a fresh proxy, noting nginx's count of requests per
    /// connection under `label` (nothing when `label` is `nil`).
    private func shaped<T>(_ label: String?, _ link: ShapedOrigin, _ body: (ShapingProxy) throws -> T) throws -> T {
        let proxy = try link.proxy()
        defer { proxy.stop() }
        let mark = link.mark()
        let result = try body(proxy)
        if let label { note("network: \(label): origin saw \(link.reuse(since: mark).description)") }
        return result
    }

    /// Sum of the sizes of the regular files under `folder`.
    private static func bytes(under folder: URL) -> Int {
        var total = 0
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey])
        while let url = enumerator?.nextObject() as? URL {
            total += (try? url.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0
        }
        return total
    }

    // MARK: HLS

    private func networkHLS(_ assets: NetworkAssets, link: ShapedOrigin, ytDLP: ExternalTool?, ffmpeg: ExternalTool)
        throws
    {
        let megabytes = Double(assets.hlsBytes) / 1e6
        let segmentBytes = assets.hlsFiles.filter { $0.hasSuffix(".ts") }.reduce(0) { total, name in
            total
                + ((try? assets.root.appendingPathComponent(name).resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
        }
        let limit = 60.0 + 4 * Double(assets.hlsBytes) / link.shape.rate

        // Ours: the library's downloader, 4 fetches at once, into a fresh store.
        let ours = try shaped("HLS, ours (HLSDownloader, 4 at once)", link) { proxy -> Double in
            let directory = try freshDirectory("network-hls-store")
            defer { remove(directory) }
            let store = try MediaStore(directory: directory)
            defer { store.close() }
            let cache = StreamingCache(store: store)
            let master = proxy.url(NetworkAssets.master)
            let (seconds, progress) = try Self.blocking { () async throws -> (Double, DownloadProgress) in
                let start = Stopwatch.now()
                let download = HLSDownloader(cache: cache, parallelFetches: 4).download(master)
                try await download.completion()
                return (BenchmarkRunner.seconds(since: start), download.snapshot)
            }
            verify(
                progress.segments == assets.hlsSegments && progress.bytes >= segmentBytes,
                "network: HLS download got \(progress.segments) of \(assets.hlsSegments) segments, \(progress.bytes) bytes"
            )
            return seconds
        }
        var baselines: [(String, Double)] = []
        var timings = [String(format: "ours %.2f s", ours)]
        if let ytDLP {
            let seconds = try shaped("HLS, yt-dlp -N 4", link) { proxy -> Double in
                let out = try freshDirectory("network-yt-dlp")
                defer { remove(out) }
                let run = try ytDLP.run(
                    [
                        "--quiet", "--no-progress", "--no-cache-dir", "--fixup", "never", "-N", "4", "-f", "bv*,ba",
                        "-o", out.path + "/%(format_id)s.%(ext)s", proxy.url(NetworkAssets.master).absoluteString,
                    ], scratch: link.scratch, limit: limit)
                let got = Self.bytes(under: out)
                verify(got >= segmentBytes * 9 / 10, "network: yt-dlp wrote \(got) of \(segmentBytes) segment bytes")
                return run.seconds
            }
            baselines.append(("yt-dlp -N 4 (video and audio formats, no fix-up)", megabytes / seconds))
            timings.append(String(format: "yt-dlp %.2f s", seconds))
        }
        let ffmpegSeconds = try shaped("HLS, ffmpeg -c copy", link) { proxy -> Double in
            let out = try freshDirectory("network-ffmpeg")
            defer { remove(out) }
            let run = try ffmpeg.run(
                [
                    "-nostdin", "-loglevel", "error", "-y", "-i", proxy.url(NetworkAssets.master).absoluteString,
                    "-map", "0", "-c", "copy", "-f", "mpegts", out.appendingPathComponent("copy.ts").path,
                ], scratch: link.scratch, limit: limit)
            let got = Self.bytes(under: out)
            verify(got >= segmentBytes * 8 / 10, "network: ffmpeg wrote \(got) of \(segmentBytes) segment bytes")
            return run.seconds
        }
        baselines.append(("ffmpeg -i master -map 0 -c copy", megabytes / ffmpegSeconds))
        timings.append(String(format: "ffmpeg %.2f s", ffmpegSeconds))
        // The master first (nothing else is known before it), then the
        // media playlists and segments over 4 connections.
        let ideal = link.shape.limitSeconds(
            bytes: assets.hlsBytes, requests: assets.hlsMediaPlaylists + assets.hlsSegments, connections: 4,
            serialRequests: 1)
        baselines.append(
            ("link limit over 4 connections (bytes at 4 × rate, a round trip per request)", megabytes / ideal))
        timings.append(String(format: "link limit %.2f s", ideal))
        record(
            "network: HLS download, \(assets.seconds) s asset (video + audio rendition, \(assets.hlsSegments) segments, "
                + String(format: "%.1f MB), shaped link, 4 connections", megabytes),
            unit: BenchResult.megabytesPerSecond, engine: megabytes / ours, baselines: baselines)
        note("network: HLS download times: " + timings.joined(separator: ", "))
    }

    // MARK: Progressive

    /// A player's request through a loader: seconds to its first byte and to its end.
    private func play(_ loader: ResourceLoader, offset: Int, length: Int?, contentInformation: Bool) throws -> (
        firstByte: Double, total: Double, bytes: Int
    ) {
        let consumer = PlaybackConsumer()
        let total = try Stopwatch.time {
            try consumer.load(loader, contentInformation: contentInformation, offset: offset, length: length)
        }
        return (consumer.secondsToFirstByte ?? .infinity, total, consumer.bytes)
    }

    /// Seconds from a fresh `origin`'s request for the first `bytes` of
    /// `url` to its first body byte, and to its last.
    private static func originTimes(_ origin: HTTPOrigin, url: URL, bytes: Int) throws -> (
        firstByte: Double, total: Double
    ) {
        try blocking {
            let start = ContinuousClock.now
            let response = try await origin.fetch(OriginRequest(url: url, range: 0..<bytes))
            var firstByte: Duration?
            var received = 0
            for try await piece in response.body {
                if firstByte == nil, !piece.isEmpty { firstByte = ContinuousClock.now - start }
                received += piece.count
            }
            let total = ContinuousClock.now - start
            guard let firstByte, received == bytes else {
                throw ExternalTool.Failure(description: "HTTPOrigin got \(received) of \(bytes) bytes")
            }
            return (firstByte.inSeconds, total.inSeconds)
        }
    }

    /// curl's own `time_starttransfer` and `time_total` for its last transfer.
    private static func curlTimes(_ run: ExternalTool.Run) throws -> (firstByte: Double, total: Double) {
        let fields = run.output.split(separator: " ").compactMap {
            Double($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard fields.count == 2 else { throw ExternalTool.Failure(description: "curl printed \(run.output)") }
        return (fields[0], fields[1])
    }

    private func networkFirstPlay(_ assets: NetworkAssets, link: ShapedOrigin, curl: ExternalTool?) throws {
        let tenSeconds = assets.trackBytes(forSeconds: 10)
        let trials = options.quick ? 2 : 3
        var ours: [(firstByte: Double, total: Double)] = []
        var direct: [(firstByte: Double, total: Double)] = []
        // The loader's HTTP client alone: where ours and curl part.
        var client: [(firstByte: Double, total: Double)] = []
        for trial in 0..<trials {
            client.append(
                try shaped(trial == 0 ? "first play, HTTPOrigin alone" : nil, link) { proxy in
                    try Self.originTimes(HTTPOrigin(), url: proxy.url(NetworkAssets.track), bytes: tenSeconds)
                })
            ours.append(
                try shaped(trial == 0 ? "first play, ours (loader, fresh store)" : nil, link) { proxy in
                    let directory = try freshDirectory("network-play-store")
                    defer { remove(directory) }
                    let store = try MediaStore(directory: directory)
                    defer { store.close() }
                    let cache = StreamingCache(store: store, origin: HTTPOrigin())
                    let played = try play(
                        cache.loader(for: proxy.url(NetworkAssets.track)), offset: 0, length: tenSeconds,
                        contentInformation: true)
                    verify(played.bytes == tenSeconds, "network: first play got \(played.bytes) of \(tenSeconds) bytes")
                    return (played.firstByte, played.total)
                })
            if let curl {
                direct.append(
                    try shaped(trial == 0 ? "first play, curl" : nil, link) { proxy in
                        try Self.curlTimes(
                            try curl.run(
                                [
                                    "-s", "-f", "-o", "/dev/null", "-r", "0-\(tenSeconds - 1)", "-w",
                                    "%{time_starttransfer} %{time_total}",
                                    proxy.url(NetworkAssets.track).absoluteString,
                                ], scratch: link.scratch, limit: 60))
                    })
            }
        }
        let curlName = "curl through the same proxy (-r 0-\(tenSeconds - 1), its own timings)"
        let clientName = "HTTPOrigin (URLSession) alone through the same proxy, same range"
        record(
            "network: first play through the loader, time to first byte (fresh store, fresh connection; median of \(trials))",
            unit: "ms (lower is better)", engine: Stopwatch.median(ours.map(\.firstByte)) * 1000,
            baselines: (direct.isEmpty ? [] : [(curlName, Stopwatch.median(direct.map(\.firstByte)) * 1000)]) + [
                (clientName, Stopwatch.median(client.map(\.firstByte)) * 1000)
            ])
        record(
            "network: first play through the loader, time to 10 s of audio (\(tenSeconds) bytes of a 128 kb/s MP3; median of \(trials))",
            unit: "ms (lower is better)", engine: Stopwatch.median(ours.map(\.total)) * 1000,
            baselines: direct.isEmpty ? [] : [(curlName, Stopwatch.median(direct.map(\.total)) * 1000)])

        // The whole track, as a player that keeps reading.
        let megabytes = Double(assets.trackBytes) / 1e6
        let whole = try shaped("whole track, ours", link) { proxy -> Double in
            let directory = try freshDirectory("network-track-store")
            defer { remove(directory) }
            let store = try MediaStore(directory: directory)
            defer { store.close() }
            let cache = StreamingCache(store: store, origin: HTTPOrigin())
            let played = try play(
                cache.loader(for: proxy.url(NetworkAssets.track)), offset: 0, length: nil, contentInformation: true)
            verify(
                played.bytes == assets.trackBytes, "network: whole track got \(played.bytes) of \(assets.trackBytes)")
            return played.total
        }
        var baselines: [(String, Double)] = []
        if let curl {
            let seconds = try shaped("whole track, curl", link) { proxy in
                try Self.curlTimes(
                    try curl.run(
                        [
                            "-s", "-f", "-o", "/dev/null", "-w", "%{time_starttransfer} %{time_total}",
                            proxy.url(NetworkAssets.track).absoluteString,
                        ], scratch: link.scratch, limit: 120)
                ).total
            }
            baselines.append(("curl through the same proxy", megabytes / seconds))
        }
        baselines.append(
            (
                "link limit, 1 connection",
                megabytes / link.shape.limitSeconds(bytes: assets.trackBytes, requests: 1, connections: 1)
            ))
        record(
            String(format: "network: play a whole %.1f MB MP3 through the loader (fresh store)", megabytes),
            unit: BenchResult.megabytesPerSecond, engine: megabytes / whole, baselines: baselines)
    }

    private func networkSeek(_ assets: NetworkAssets, link: ShapedOrigin, curl: ExternalTool?) throws {
        let tenSeconds = assets.trackBytes(forSeconds: 10)
        let half = assets.trackBytes / 2
        let uncached = assets.trackBytes * 3 / 4
        let cached = assets.trackBytes / 4
        let (far, near) = try shaped("seek, ours", link) { proxy in
            let directory = try freshDirectory("network-seek-store")
            defer { remove(directory) }
            let store = try MediaStore(directory: directory)
            defer { store.close() }
            let url = proxy.url(NetworkAssets.track)
            let cache = StreamingCache(store: store, origin: HTTPOrigin())
            let loader = cache.loader(for: url)
            let first = try play(loader, offset: 0, length: half, contentInformation: true)
            verify(first.bytes == half, "network: the first half played \(first.bytes) of \(half) bytes")
            try waitUntilCached(store, key: cache.cacheKey(for: url), 0..<half)
            let far = try play(loader, offset: uncached, length: tenSeconds, contentInformation: false)
            let near = try play(loader, offset: cached, length: tenSeconds, contentInformation: false)
            verify(far.bytes == tenSeconds && near.bytes == tenSeconds, "network: a seek got too few bytes")
            return (far, near)
        }
        var baselines: [(String, Double)] = []
        var totalBaselines: [(String, Double)] = []
        if let curl {
            // Two transfers on one connection (--next): the seek's request is
            // the second, on a warm connection, as a player's is.
            let times = try shaped("seek, curl", link) { proxy in
                let url = proxy.url(NetworkAssets.track).absoluteString
                return try Self.curlTimes(
                    try curl.run(
                        [
                            "-s", "-f", "-o", "/dev/null", "-r", "0-1", url, "--next", "-s", "-f", "-o", "/dev/null",
                            "-r", "\(uncached)-\(uncached + tenSeconds - 1)", "-w",
                            "%{time_starttransfer} %{time_total}", url,
                        ], scratch: link.scratch, limit: 60))
            }
            baselines.append(("curl, warm connection, the same range", times.firstByte * 1000))
            totalBaselines.append(("curl, warm connection, the same range", times.total * 1000))
            // The same range alone, on a new connection: what the loader's
            // seek costs at best while the earlier transfer holds the warm
            // connection (its request is still running).
            let fresh = try shaped("seek, curl on a new connection", link) { proxy in
                try Self.curlTimes(
                    try curl.run(
                        [
                            "-s", "-f", "-o", "/dev/null", "-r", "\(uncached)-\(uncached + tenSeconds - 1)", "-w",
                            "%{time_starttransfer} %{time_total}", proxy.url(NetworkAssets.track).absoluteString,
                        ], scratch: link.scratch, limit: 60))
            }
            baselines.append(("curl, new connection, the same range", fresh.firstByte * 1000))
            totalBaselines.append(("curl, new connection, the same range", fresh.total * 1000))
        }
        record(
            "network: seek to 75% of a half-cached track (not cached), time to first byte",
            unit: "ms (lower is better)", engine: far.firstByte * 1000, baselines: baselines)
        record(
            "network: seek to 75% of a half-cached track (not cached), time to 10 s of audio",
            unit: "ms (lower is better)", engine: far.total * 1000, baselines: totalBaselines)
        record(
            "network: seek to 25% of a half-cached track (cached), time to first byte",
            unit: "ms (lower is better)", engine: near.firstByte * 1000, baselines: baselines)
    }

    /// Waits (up to 10 s) until `range` of `key` is in the store.
    private func waitUntilCached(_ store: MediaStore, key: String, _ range: Range<Int>) throws {
        for _ in 0..<1000 {
            if try store.cachedRanges(forKey: key).contains(where: {
                $0.lowerBound <= range.lowerBound && $0.upperBound >= range.upperBound
            }) {
                return
            }
            usleep(10_000)
        }
        verify(false, "network: \(range) of \(key) is not in the store after 10 s")
    }

    // MARK: Offline

    private func networkOffline(
        _ assets: NetworkAssets, link: ShapedOrigin, curl: ExternalTool?, aria2c: ExternalTool?
    ) throws {
        let megabytes = Double(assets.offlineBytes) / 1e6
        let limit = 60.0 + 4 * Double(assets.offlineBytes) / link.shape.rate
        let connections = ProgressiveDownloadPerformer.defaultConnections
        let ours = try shaped("offline download, ours (OfflineDownloader, \(connections) connections)", link) {
            proxy -> Double in
            let directory = try freshDirectory("network-offline-store")
            defer { remove(directory) }
            let store = try MediaStore(directory: directory)
            defer { store.close() }
            let cache = StreamingCache(store: store, origin: HTTPOrigin())
            let url = proxy.url(NetworkAssets.offline)
            let seconds = try Self.blocking { () async throws -> Double in
                let start = Stopwatch.now()
                try await OfflineDownloader(cache: cache, connectionsPerDownload: connections).download(url)
                    .completion()
                return BenchmarkRunner.seconds(since: start)
            }
            let info = try store.info(forKey: cache.cacheKey(for: url))
            verify(
                info?.isComplete == true && info?.length == assets.offlineBytes,
                "network: the offline download is not complete in the store")
            return seconds
        }
        var baselines: [(String, Double)] = []
        func file(_ name: String, _ arguments: (String, String) -> [String], tool: ExternalTool, label: String) throws {
            let seconds = try shaped("offline download, \(label)", link) { proxy -> Double in
                let out = try freshDirectory("network-\(name)")
                defer { remove(out) }
                let run = try tool.run(
                    arguments(out.path, proxy.url(NetworkAssets.offline).absoluteString), scratch: link.scratch,
                    limit: limit)
                let got = Self.bytes(under: out)
                verify(got == assets.offlineBytes, "network: \(label) wrote \(got) of \(assets.offlineBytes) bytes")
                return run.seconds
            }
            baselines.append((label, megabytes / seconds))
        }
        if let curl {
            try file("curl", { ["-s", "-f", "-o", $0 + "/file.bin", $1] }, tool: curl, label: "curl")
        }
        if let aria2c {
            try file(
                "aria2c",
                {
                    [
                        "-q", "-x", "4", "-s", "4", "-k", "1M", "--file-allocation=none", "--allow-overwrite=true",
                        "--auto-file-renaming=false", "-d", $0, "-o", "file.bin", $1,
                    ]
                }, tool: aria2c, label: "aria2c -x 4 -s 4 -k 1M")
        }
        baselines.append(
            (
                "link limit, 1 connection",
                megabytes / link.shape.limitSeconds(bytes: assets.offlineBytes, requests: 1, connections: 1)
            ))
        // The length is known after a first response; then a request per connection.
        baselines.append(
            (
                "link limit over \(connections) connections (bytes at \(connections) × rate, a request each after the first)",
                megabytes
                    / link.shape.limitSeconds(
                        bytes: assets.offlineBytes, requests: connections, connections: connections, serialRequests: 1)
            ))
        record(
            "network: progressive offline download of \(assets.offlineBytes / 1_000_000) MB (OfflineDownloader, \(connections) connections), shaped link",
            unit: BenchResult.megabytesPerSecond, engine: megabytes / ours, baselines: baselines)
    }
}
