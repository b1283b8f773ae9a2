import Foundation
import LoopbackNginx
import MediaServer
import MediaStore
import MediaStreaming
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BenchmarkRunner {
    /// Issue 9's figures: `MediaServer` serving fully cached tracks from the
    /// store to `curl` (the load generator: one process per client, body to
    /// /dev/null), against nginx serving the same bytes from plain files on
    /// the same machine to the same curl. The server runs in this process,
    /// so the RSS figure is the server's (and the store's mapped pages).
    func runServer() throws {
        let w = workloads
        let trackSize = w.playbackEntryBytes
        let clients = 8
        let smallSize = options.quick ? 4_000_000 : 25_000_000
        log(
            "server: a \(trackSize / 1_000_000) MB track to one curl; \(clients) curls on \(clients) tracks of \(smallSize / 1_000_000) MB"
        )
        guard Self.which("curl") else {
            note("server: skipped, curl not installed (Tools/bootstrap installs it)")
            return
        }
        let web = try freshDirectory("server-www")
        defer { remove(web) }
        var rng = SplitMix64(seed: Workloads.largeSeed ^ 0x5E4E)
        try Self.writeFile(web.appendingPathComponent("track.bin"), bytes: trackSize, &rng)
        for index in 0..<clients {
            try Self.writeFile(web.appendingPathComponent("t\(index).bin"), bytes: smallSize, &rng)
        }
        let nginx: LoopbackNginx
        do {
            nginx = try LoopbackNginx(
                serving: web, in: try freshDirectory("server-nginx"), accessLog: false,
                httpDirectives: "keepalive_requests 100000;")
        } catch {
            note("server: skipped, \(error)")
            return
        }
        defer { nginx.stop() }
        let directory = try freshDirectory("server-store")
        defer { remove(directory) }
        let store = try MediaStore(directory: directory)
        let cache = StreamingCache(store: store)
        let names = ["track.bin"] + (0..<clients).map { "t\($0).bin" }
        for name in names {
            let consumer = PlaybackConsumer()
            try consumer.load(cache.loader(for: nginx.url(name)))
            try waitForEntry(store, key: nginx.url(name).absoluteString)
        }
        let server = MediaServer(cache: cache)
        try server.start()
        defer { server.stop() }
        let originBefore = cache.statistics.originRequests

        // 1. One client, the whole 100 MB track: throughput and time to first byte.
        let local = server.url(for: nginx.url("track.bin")).absoluteString
        let direct = nginx.url("track.bin").absoluteString
        var serverRates: [Double] = []
        var nginxRates: [Double] = []
        for _ in 0..<w.repetitions {
            let mine = try Self.curl(local)
            let theirs = try Self.curl(direct)
            verify(
                mine.bytes == trackSize && theirs.bytes == trackSize,
                "server: got \(mine.bytes) and \(theirs.bytes) of \(trackSize) bytes")
            serverRates.append(Double(mine.bytes) / mine.total / 1e6)
            nginxRates.append(Double(theirs.bytes) / theirs.total / 1e6)
        }
        record(
            "server: a cached \(trackSize / 1_000_000) MB track to one client (curl, body to /dev/null)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(serverRates),
            baselines: [("nginx, the same bytes from a plain file", Stopwatch.median(nginxRates))])
        let trials = options.quick ? 10 : 30
        var serverFirst: [Double] = []
        var nginxFirst: [Double] = []
        for _ in 0..<trials {
            serverFirst.append(try Self.curl(local, range: "0-1").firstByte)
            nginxFirst.append(try Self.curl(direct, range: "0-1").firstByte)
        }
        record(
            "server: time to first byte, bytes 0-1 of the cached track (curl time_starttransfer, new connection; median of \(trials))",
            unit: "µs (lower is better)", engine: Stopwatch.median(serverFirst) * 1e6,
            baselines: [("nginx, plain file", Stopwatch.median(nginxFirst) * 1e6)])

        // 2. Eight clients at once, each on its own cached track.
        let startRSS = MemoryProbe.residentBytes() ?? 0
        var serverAggregate: [Double] = []
        var nginxAggregate: [Double] = []
        var peakRSS = startRSS
        for _ in 0..<w.repetitions {
            let urls = (0..<clients).map { server.url(for: nginx.url("t\($0).bin")).absoluteString }
            let (rate, peak) = try Self.concurrentCurls(urls, expected: smallSize, sampleMemory: true)
            peakRSS = max(peakRSS, peak)
            serverAggregate.append(rate)
            let (nginxRate, _) = try Self.concurrentCurls(
                (0..<clients).map { nginx.url("t\($0).bin").absoluteString }, expected: smallSize, sampleMemory: false)
            nginxAggregate.append(nginxRate)
        }
        record(
            "server: \(clients) clients at once on \(clients) cached \(smallSize / 1_000_000) MB tracks, aggregate (\(clients) curls)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(serverAggregate),
            baselines: [("nginx, plain files", Stopwatch.median(nginxAggregate))])
        record(
            BenchResult(
                name:
                    "server: peak RSS growth while \(clients) clients stream (VmRSS sampled every 10 ms, this process)",
                unit: BenchResult.mebibytes, value: Self.mebibytes(peakRSS - startRSS)))
        verify(cache.statistics.originRequests == originBefore, "server: serving cached tracks sent origin requests")
        verify(
            server.statistics.responsesCut == 0, "server: \(server.statistics.responsesCut) responses were cut short")
        note(
            "server: curl is the load generator for both (one process per client); figures taken on a shared machine are noisy."
        )
    }

    /// The encrypted group's server row: one cached track served through
    /// `MediaServer` from a plain and from an encrypted store (each filled
    /// from the same nginx origin through its own `StreamingCache`), to
    /// curl in turn, the plain store as the baseline.
    func runEncryptedServer() throws {
        let w = workloads
        let trackSize = w.playbackEntryBytes
        guard Self.which("curl") else {
            note("encrypted store: server row skipped, curl not installed (Tools/bootstrap installs it)")
            return
        }
        let web = try freshDirectory("encrypted-server-www")
        defer { remove(web) }
        var rng = SplitMix64(seed: Workloads.largeSeed ^ 0x5E4E_0029)
        try Self.writeFile(web.appendingPathComponent("track.bin"), bytes: trackSize, &rng)
        let nginx: LoopbackNginx
        do {
            nginx = try LoopbackNginx(
                serving: web, in: try freshDirectory("encrypted-server-nginx"), accessLog: false,
                httpDirectives: "keepalive_requests 100000;")
        } catch {
            note("encrypted store: server row skipped, \(error)")
            return
        }
        defer { nginx.stop() }
        let plainDirectory = try freshDirectory("encrypted-server-plain")
        let encryptedDirectory = try freshDirectory("encrypted-server-encrypted")
        defer {
            remove(plainDirectory)
            remove(encryptedDirectory)
        }
        var configuration = StoreConfiguration()
        configuration.encryption = StoreConfiguration.Encryption(key: StoreKey.random())
        let stores = [
            try MediaStore(directory: plainDirectory),
            try MediaStore(directory: encryptedDirectory, configuration: configuration),
        ]
        let origin = nginx.url("track.bin")
        var servers: [MediaServer] = []
        defer { for server in servers { server.stop() } }
        for store in stores {
            let cache = StreamingCache(store: store)
            try PlaybackConsumer().load(cache.loader(for: origin))
            try waitForEntry(store, key: origin.absoluteString)
            let server = MediaServer(cache: cache)
            try server.start()
            servers.append(server)
        }
        var rates: [[Double]] = [[], []]
        for _ in 0..<w.repetitions {
            for (position, server) in servers.enumerated() {
                let figures = try Self.curl(server.url(for: origin).absoluteString)
                verify(figures.bytes == trackSize, "encrypted server: got \(figures.bytes) of \(trackSize) bytes")
                rates[position].append(Double(figures.bytes) / figures.total / 1e6)
            }
        }
        record(
            "encrypted store: serve a cached \(trackSize / 1_000_000) MB track through MediaServer (curl, body to /dev/null)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(rates[1]),
            baselines: [("plain store", Stopwatch.median(rates[0]))])
        for server in servers { server.stop() }
        servers.removeAll()
        for store in stores { store.close() }
    }

    private func waitForEntry(_ store: MediaStore, key: String) throws {
        for _ in 0..<2000 {
            if try store.info(forKey: key)?.isComplete == true { return }
            usleep(5_000)
        }
        verify(false, "server: \(key) never completed in the store")
    }

    private static func writeFile(_ url: URL, bytes: Int, _ rng: inout SplitMix64) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0
        while written < bytes {
            let piece = Workloads.randomData(min(1 << 20, bytes - written), &rng)
            try handle.write(contentsOf: piece)
            written += piece.count
        }
    }

    private static func which(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    /// What one curl run measured.
    private struct CurlFigures {
        var bytes: Int
        var total: Double
        var firstByte: Double
    }

    /// A curl started (``ChildProcess``, not Foundation's `Process`: its
    /// monitor thread freed memory twice at the bench's exit, now and then,
    /// and the run's report was lost), writing its figures to `output`.
    private struct CurlRun {
        let process: ChildProcess
        let output: String
    }

    private static func startCurl(_ url: String, range: String?) throws -> CurlRun {
        let output = NSTemporaryDirectory() + "mediacache-bench-curl-\(UInt64.random(in: 0...UInt64.max)).out"
        let arguments =
            ["-sS", "-o", "/dev/null", "-w", "%{size_download} %{time_total} %{time_starttransfer}"]
            + (range.map { ["-r", $0] } ?? []) + [url]
        return CurlRun(process: try ChildProcess("curl", arguments, standardOutput: output), output: output)
    }

    private static func figures(_ run: CurlRun) -> CurlFigures {
        run.process.waitUntilExit()
        defer { try? FileManager.default.removeItem(atPath: run.output) }
        let text = (try? String(contentsOfFile: run.output, encoding: .utf8)) ?? ""
        let parts = text.split(separator: " ").map { Double($0) ?? 0 }
        guard parts.count == 3, run.process.terminationStatus == 0 else {
            return CurlFigures(bytes: 0, total: 1, firstByte: 1)
        }
        return CurlFigures(bytes: Int(parts[0]), total: max(parts[1], 1e-6), firstByte: parts[2])
    }

    private static func curl(_ url: String, range: String? = nil) throws -> CurlFigures {
        figures(try startCurl(url, range: range))
    }

    /// Runs one curl per URL at once; returns the aggregate MB/s (all bytes
    /// over the wall time from the first start to the last end) and the peak
    /// VmRSS seen meanwhile.
    private static func concurrentCurls(_ urls: [String], expected: Int, sampleMemory: Bool) throws -> (Double, Int) {
        let started = Stopwatch.now()
        let runs = try urls.map { try startCurl($0, range: nil) }
        let finished = Locked(false)
        let peak = Locked(MemoryProbe.residentBytes() ?? 0)
        let sampler = Thread {
            while !finished.current {
                if sampleMemory, let now = MemoryProbe.residentBytes() { peak.withLock { $0 = max($0, now) } }
                usleep(10_000)
            }
        }
        sampler.start()
        let results = runs.map { figures($0) }
        let seconds = Double(Stopwatch.now() - started) / 1e9
        finished.withLock { $0 = true }
        let bytes = results.reduce(0) { $0 + $1.bytes }
        if bytes != expected * urls.count {
            FileHandle.standardError.write(
                Data("mediacache-bench: concurrent curls got \(bytes) of \(expected * urls.count) bytes\n".utf8))
        }
        return (Double(bytes) / seconds / 1e6, peak.current)
    }
}
