import Foundation
import LoopbackNginx
import MediaStore
import MediaStreaming

extension BenchmarkRunner {
    /// Issue 11's figures, with nginx on loopback as the origin:
    ///
    /// 1. Time to first byte of a player's seek (a fresh hole, content
    ///    information known) while three offline downloads run from a
    ///    `limit_rate`-ed location of the same origin, against the same
    ///    seeks with nothing else running. The downloads yield to the
    ///    player through the cache's `FetchScheduler`.
    /// 2. Preloading the first 10 s of the next 5 tracks (`Preloader`,
    ///    by duration): origin bytes fetched against the bytes those 10 s
    ///    need (the prefix `PlaybackPrefix` names).
    func runScheduling() throws {
        let quick = options.quick
        let trials = quick ? 6 : 12
        // Seeks 2 MiB apart: none lands within a request's reach of the last one.
        let fileBytes = (trials + 1) * (2 << 20)
        log(
            "scheduling: seeks while 3 downloads of \(fileBytes >> 20) MiB run at 2 MiB/s each; preload 5 tracks × 10 s"
        )
        let web = try freshDirectory("scheduling-www")
        defer { remove(web) }
        let names = ["download-0.bin", "download-1.bin", "download-2.bin", "play-alone.bin", "play-busy.bin"]
        for (index, name) in names.enumerated() {
            try Self.writeRandomFile(web.appendingPathComponent(name), bytes: fileBytes, seed: 1100 + UInt64(index))
        }
        let tracks = Self.preloadTracks()
        for track in tracks {
            try FileManager.default.copyItem(at: track, to: web.appendingPathComponent(track.lastPathComponent))
        }
        let server: LoopbackNginx
        do {
            server = try LoopbackNginx(
                serving: web, in: try freshDirectory("scheduling-nginx"), accessLog: false,
                serverDirectives: "location /slow/ { alias \(web.path)/; limit_rate 2m; sendfile_max_chunk 64k; }")
        } catch {
            note("scheduling: skipped, \(error)")
            return
        }
        defer { server.stop() }

        // 1. Seeks alone, then seeks while three downloads run.
        let directory = try freshDirectory("scheduling-store")
        defer { remove(directory) }
        let store = try MediaStore(directory: directory, configuration: StoreConfiguration(sizeLimit: 1 << 30))
        let cache = StreamingCache(store: store)
        let alone = try seekFirstBytes(cache, server.url("slow/play-alone.bin"), fileBytes: fileBytes, trials: trials)
        let downloads = (0..<3).map { index in
            let loader = cache.loader(for: server.url("slow/download-\(index).bin"))
            return Task { try await loader.downloadAll(priority: .download) }
        }
        Thread.sleep(forTimeInterval: 1)
        let busyBefore = cache.statistics.originBytes
        let busy = try seekFirstBytes(cache, server.url("slow/play-busy.bin"), fileBytes: fileBytes, trials: trials)
        let downloadedDuring = cache.statistics.originBytes - busyBefore
        for download in downloads { download.cancel() }
        let aloneMedian = Stopwatch.median(alone) * 1000
        let busyMedian = Stopwatch.median(busy) * 1000
        record(
            BenchResult(
                name:
                    "scheduling: player seek, time to first byte while 3 downloads run from a limit_rate-ed origin (median of \(trials))",
                unit: "ms (lower is better)", value: busyMedian,
                baseline: "the same seeks with no download", baselineValue: aloneMedian))
        note(
            String(
                format:
                    "seek first byte (target ≤ 1.5× alone): %.2f ms median, %.2f ms worst during 3 downloads; %.2f ms median, %.2f ms worst alone; %.1f MiB fetched by the downloads (and seeks) during the busy seeks: the downloads ran between seeks.",
                busyMedian, (busy.max() ?? 0) * 1000, aloneMedian, (alone.max() ?? 0) * 1000,
                Double(downloadedDuring) / 1_048_576))

        // 2. The next 5 tracks warmed for 10 s each, in a store of their own.
        let preloadDirectory = try freshDirectory("scheduling-preload")
        defer { remove(preloadDirectory) }
        let preloadStore = try MediaStore(directory: preloadDirectory)
        let preloadCache = StreamingCache(store: preloadStore)
        let playlist = tracks.map { server.url($0.lastPathComponent) }
        let preloader = Preloader(cache: preloadCache)
        let prefixes = try Self.blocking {
            var prefixes: [Int] = []
            for task in preloader.keepWarm(playlist, current: -1, ahead: 5, amount: .duration(seconds: 10)) {
                prefixes.append(try await task.completion())
            }
            return prefixes
        }
        let needed = prefixes.reduce(0, +)
        let fetched = preloadCache.statistics.originBytes
        record(
            BenchResult(
                name:
                    "scheduling: preload next 5 tracks × 10 s (MP3 CBR, MP3 VBR, M4A, M4A index at the end, FLAC), origin bytes",
                unit: "bytes (lower is better)", value: Double(fetched),
                baseline: "bytes the 10 s need (PlaybackPrefix)", baselineValue: Double(needed)))
        note(
            String(
                format:
                    "preload 5 × 10 s: %d origin bytes for %d needed (%.2f×); target ≤ 1.2×: %@. A prefix's last chunk is stored short; the tail-index M4A's moov is read from the origin without storing it when storing it would cost more than twice its size.",
                fetched, needed, Double(fetched) / Double(max(1, needed)),
                Double(fetched) <= 1.2 * Double(needed) ? "met" : "NOT met"))
    }

    /// Seconds to the first byte of `trials` seeks of 256 KiB, 2 MiB
    /// apart, into `url`. Each waits for the transfer before it to end (a
    /// reader a request's worth ahead of a running transfer joins it rather
    /// than ask for its own: that would measure the join, not the seek).
    private func seekFirstBytes(_ cache: StreamingCache, _ url: URL, fileBytes: Int, trials: Int) throws -> [Double] {
        let loader = cache.loader(for: url)
        _ = try Self.blocking { try await loader.contentInformation() }
        Thread.sleep(forTimeInterval: 0.7)
        var seconds: [Double] = []
        for trial in 0..<trials {
            let consumer = PlaybackConsumer()
            try consumer.load(loader, contentInformation: false, offset: (trial + 1) * (2 << 20), length: 256 * 1024)
            seconds.append(consumer.secondsToFirstByte ?? .infinity)
            Thread.sleep(forTimeInterval: 0.7)
        }
        return seconds
    }

    /// The committed preload fixtures (Tools/make-fixtures): 30 s each.
    private static func preloadTracks() -> [URL] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let folder = root.appendingPathComponent("Tests/MediaStreamingTests/Fixtures/Preload")
        return ["cbr.mp3", "vbr.mp3", "track.m4a", "tail-moov.m4a", "track.flac"].map {
            folder.appendingPathComponent($0)
        }
    }
}
