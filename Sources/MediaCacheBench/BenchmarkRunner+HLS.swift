import Foundation
import LoopbackNginx
import MediaDownloads
import MediaHLS
import MediaServer
import MediaStore
import MediaStreaming
import MediaSupport

extension BenchmarkRunner {
    /// Issue 10's figures: an HLS asset (a master, one media playlist,
    /// segments of random bytes) on a loopback nginx. Download with
    /// `HLSDownloader` (4 segments at once) into a fresh store against plain
    /// sequential GETs of the same files with the same HTTP client, and
    /// against the two halves of the download measured apart: the client
    /// alone (4 plain GETs at once, nothing stored) and the store alone
    /// (the same segments written 4 at once, each published in a commit of
    /// its own that the store's group commit may share, no network); then,
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
        var concurrentSeconds: [Double] = []
        var storeSeconds: [Double] = []
        // The segments as the client hands them on (16 KiB pieces), for the store alone.
        let bodies = try (0..<segments).map { index -> [Data] in
            let data = try Data(contentsOf: web.appendingPathComponent("s\(index).ts"))
            return stride(from: 0, to: data.count, by: 16 << 10).map { data[$0..<min(data.count, $0 + (16 << 10))] }
        }
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
            concurrentSeconds.append(try Self.concurrentGETs(of: files.map { nginx.url($0) }, atOnce: 4))
            storeSeconds.append(
                try storeAlone(bodies, atOnce: 4, in: try freshDirectory("hls-store-alone-\(repetition)")))
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
        let concurrent = Stopwatch.median(concurrentSeconds)
        let storeOnly = Stopwatch.median(storeSeconds)
        record(
            "hls: download of \(segments) segments (\(total / 1_000_000) MB) on loopback, 4 at once",
            unit: "segments/s (higher is better)", engine: Double(segments) / download,
            baselines: [("sequential GETs of the same files, same client", Double(segments) / plain)])
        record(
            "hls: download of \(segments) segments (\(total / 1_000_000) MB) on loopback, 4 at once",
            unit: BenchResult.megabytesPerSecond, engine: Self.megabytesPerSecond(total, download),
            baselines: [
                ("sequential GETs of the same files, same client", Self.megabytesPerSecond(total, plain)),
                ("the client alone: 4 plain GETs at once, nothing stored", Self.megabytesPerSecond(total, concurrent)),
                (
                    "the store alone: the segments written 4 at once, a commit each (shared when they meet), no network",
                    Self.megabytesPerSecond(total, storeOnly)
                ),
            ])

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

    /// Seconds to GET every one of `urls` whole, `count` at once, with one
    /// `HTTPOrigin` (the download's client), nothing stored.
    static func concurrentGETs(of urls: [URL], atOnce count: Int) throws -> Double {
        try blocking { () async throws -> Double in
            let origin = HTTPOrigin()
            let queue = Locked(urls[...])
            let start = Stopwatch.now()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        while let url = queue.withLock({ $0.popFirst() }) {
                            for try await _ in try await origin.fetch(OriginRequest(url: url)).body {}
                        }
                    }
                }
                try await group.waitForAll()
            }
            return BenchmarkRunner.seconds(since: start)
        }
    }

    /// Seconds to write `bodies` (each in its pieces) into a fresh store in
    /// `directory`, `count` at once, as a download's sinks publish them:
    /// each through an `EntryWriter` finished in one call on the lanes
    /// beside the store's write queue (a synced commit, shared by the
    /// writes that meet in the store's group commit). Checks every length.
    func storeAlone(_ bodies: [[Data]], atOnce count: Int, in directory: URL) throws -> Double {
        let store = try MediaStore(directory: directory)
        defer {
            store.close()
            remove(directory)
        }
        let storeIO = StreamingCache(store: store).storeIO
        let (seconds, lengths) = try Self.blocking { () async throws -> (Double, [Int: Int]) in
            let queue = Locked(bodies.indices[...])
            let start = Stopwatch.now()
            let lengths = try await withThrowingTaskGroup(of: [Int: Int].self) { group in
                for _ in 0..<count {
                    group.addTask {
                        var lengths: [Int: Int] = [:]
                        while let index = queue.withLock({ $0.popFirst() }) {
                            let pieces = bodies[index]
                            lengths[index] = try await storeIO.writeBeside { store throws(StoreError) -> Int? in
                                let writer = try store.makeWriter(forKey: "segment-\(index)")
                                for piece in pieces { try writer.append(piece) }
                                return try writer.finish().length
                            }
                        }
                        return lengths
                    }
                }
                return try await group.reduce(into: [Int: Int]()) { $0.merge($1) { first, _ in first } }
            }
            return (BenchmarkRunner.seconds(since: start), lengths)
        }
        let wrong = bodies.indices.filter { lengths[$0] != bodies[$0].reduce(0) { $0 + $1.count } }
        verify(wrong.isEmpty, "hls: store alone: \(wrong.count) segments stored with the wrong length")
        return seconds
    }
}
