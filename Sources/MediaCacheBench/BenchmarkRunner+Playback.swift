import Foundation
import LoopbackNginx
import MediaStore
import MediaStreaming
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BenchmarkRunner {
    /// Issue 4's playback figures, through MediaStreaming's `ResourceLoader`
    /// with nginx on loopback as the origin (`HTTPOrigin`, URLSession):
    /// resident memory while 1 GiB streams through the loader (against
    /// `HTTPOrigin` alone fetching the same bytes), time to first byte from
    /// the store for a 100 MB entry and throughput of serving it (against a
    /// plain file holding the same bytes), and origin bytes per replay.
    /// The consumer counts bytes and keeps none.
    func runPlayback() throws {
        let w = workloads
        let firstInProcess = results.isEmpty
        let streamSize = w.streamBytes
        let entrySize = w.playbackEntryBytes
        log(
            "playback: \(Workloads.describe(bytes: streamSize)) through the loader, a \(entrySize / 1_000_000) MB entry replayed"
        )
        let web = try freshDirectory("playback-www")
        defer { remove(web) }
        let bigFile = web.appendingPathComponent("long-mix.bin")
        let trackFile = web.appendingPathComponent("track.bin")
        try Self.writeRandomFile(bigFile, bytes: streamSize, seed: Workloads.streamSeed)
        try Self.writeRandomFile(trackFile, bytes: entrySize, seed: Workloads.largeSeed)
        let server: LoopbackNginx
        do {
            server = try LoopbackNginx(serving: web, in: try freshDirectory("playback-nginx"), accessLog: false)
        } catch {
            note("playback: skipped, \(error)")
            return
        }
        defer { server.stop() }
        let origin = HTTPOrigin()

        // 1. Resident memory while streaming through the loader, first in
        //    the group (after its baseline, which holds about 1 MiB) so that
        //    VmHWM is the stream's own when no other group ran before.
        let alone = try streamOriginAlone(server.url("long-mix.bin"), origin: origin, size: streamSize)
        let streamed = try streamThroughLoader(
            server.url("long-mix.bin"), origin: origin, size: streamSize, file: bigFile, firstInProcess: firstInProcess)
        let size = Workloads.describe(bytes: streamSize)
        record(
            BenchResult(
                name:
                    "playback: stream \(size) from nginx through the loader, peak RSS growth (VmRSS sampled every MiB\(streamed.peakGrowth == nil ? "" : ", VmHWM"))",
                unit: BenchResult.mebibytes,
                value: Self.mebibytes(max(streamed.memory.totalGrowth, streamed.peakGrowth ?? 0)),
                baseline: "HTTPOrigin alone (1 MiB ranges, bytes dropped)",
                baselineValue: Self.mebibytes(alone.memory.totalGrowth)))
        note(
            String(
                format:
                    "playback RSS growth (target < 64 MiB) streaming %@ through the loader at %.0f MB/s: VmRSS +%.1f MiB (anonymous +%.1f MiB, file-backed +%.1f MiB)%@; loader's largest reader backlog %.2f MiB; HTTPOrigin alone at %.0f MB/s: +%.1f MiB (anonymous +%.1f MiB, file-backed +%.1f MiB).",
                size, streamed.throughput, Self.mebibytes(streamed.memory.totalGrowth),
                Self.mebibytes(streamed.memory.anonymousGrowth),
                Self.mebibytes(streamed.memory.fileGrowth),
                streamed.peakGrowth.map { String(format: ", VmHWM − start VmRSS +%.1f MiB", Self.mebibytes($0)) } ?? "",
                Self.mebibytes(streamed.peakBacklog), alone.throughput, Self.mebibytes(alone.memory.totalGrowth),
                Self.mebibytes(alone.memory.anonymousGrowth), Self.mebibytes(alone.memory.fileGrowth)))

        // 2. A 100 MB track: the first play fills the store, replays come from it.
        let directory = try freshDirectory("playback-store")
        defer { remove(directory) }
        let store = try MediaStore(directory: directory)
        let trackURL = server.url("track.bin")
        let firstCache = StreamingCache(store: store, origin: origin)
        let firstPlay = PlaybackConsumer()
        try firstPlay.load(firstCache.loader(for: trackURL))
        let firstOriginBytes = firstCache.statistics.originBytes
        verify(firstPlay.bytes == entrySize, "playback: the first play got \(firstPlay.bytes) of \(entrySize) bytes")
        try waitUntilComplete(store, key: trackURL.absoluteString)

        let trials = options.quick ? 20 : 100
        var loaderFirstByte: [Double] = []
        var fileFirstByte: [Double] = []
        var replayOriginBytes = 0
        for _ in 0..<trials {
            // A fresh cache each time: nothing about the track is remembered in memory.
            let cache = StreamingCache(store: store, origin: origin)
            let consumer = PlaybackConsumer()
            try consumer.load(cache.loader(for: trackURL), length: 2)
            loaderFirstByte.append(consumer.secondsToFirstByte ?? .infinity)
            replayOriginBytes += cache.statistics.originBytes
            fileFirstByte.append(try Self.timeFirstBytes(of: trackFile, count: 2))
        }
        record(
            "playback: time to first byte from the store, \(entrySize / 1_000_000) MB entry (fresh loader: content information + bytes 0-1; median of \(trials))",
            unit: "µs (lower is better)", engine: Stopwatch.median(loaderFirstByte) * 1e6,
            baselines: [("plain file (open + read 2 bytes)", Stopwatch.median(fileFirstByte) * 1e6)])

        var loaderRates: [Double] = []
        var fileRates: [Double] = []
        var posixRates: [Double] = []
        // A pass takes tens of milliseconds: take many, interleaved with
        // the baselines, so that the medians are not one scheduler hiccup.
        let servePasses = options.quick ? 3 : 15
        for _ in 0..<servePasses {
            let cache = StreamingCache(store: store, origin: origin)
            let consumer = PlaybackConsumer()
            let seconds = try Stopwatch.time { try consumer.load(cache.loader(for: trackURL)) }
            verify(consumer.bytes == entrySize, "playback: a replay got \(consumer.bytes) of \(entrySize) bytes")
            replayOriginBytes += cache.statistics.originBytes
            loaderRates.append(Self.megabytesPerSecond(consumer.bytes, seconds))
            fileRates.append(try Self.readRate(of: trackFile, pieceSize: store.configuration.chunkSize))
            posixRates.append(try Self.posixReadRate(of: trackFile, pieceSize: store.configuration.chunkSize))
        }
        // The row divides two medians; a pass the machine stalled in moves
        // it. The median of the per-pass ratios (each loader pass against
        // the read(2) pass right after it) does not follow one pass.
        note(
            String(
                format: "playback: serving the cached entry, median of %d per-pass ratios to read(2): %.2f×",
                servePasses, Stopwatch.median(zip(loaderRates, posixRates).map { $0 / $1 })))
        let replays = trials + servePasses
        record(
            "playback: origin bytes per replay of the \(entrySize / 1_000_000) MB entry (\(replays) replays)",
            unit: "bytes (lower is better)",
            engine: Double(replayOriginBytes) / Double(replays), baselines: [("first play", Double(firstOriginBytes))])
        record(
            "playback: serve the cached \(entrySize / 1_000_000) MB entry through the loader (bytes=0-, chunk by chunk; median of \(servePasses) passes, each followed by the baselines)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(loaderRates),
            baselines: [
                ("plain file (FileHandle, chunk-size reads)", Stopwatch.median(fileRates)),
                ("plain file (read(2) into one reused buffer, chunk-size)", Stopwatch.median(posixRates)),
            ])
        verify(replayOriginBytes == 0, "playback: replays fetched \(replayOriginBytes) bytes from the origin")
        try verifySample(of: store, key: trackURL.absoluteString, against: trackFile, length: entrySize)
    }

    /// What streaming through the loader measured.
    private struct PlaybackStream {
        var throughput: Double
        var memory: MemorySampler
        var peakGrowth: Int?
        var peakBacklog: Int
    }

    /// Streams `url` (`size` bytes) through a loader over a fresh store, sampling memory every MiB.
    private func streamThroughLoader(_ url: URL, origin: HTTPOrigin, size: Int, file: URL, firstInProcess: Bool) throws
        -> PlaybackStream
    {
        let directory = try freshDirectory("playback-stream")
        defer { remove(directory) }
        let store = try MediaStore(directory: directory)
        let cache = StreamingCache(store: store, origin: origin)
        let startHWM = MemoryProbe.peakResidentBytes() ?? 0
        let consumer = PlaybackConsumer(memory: MemorySampler())
        let seconds = try Stopwatch.time { try consumer.load(cache.loader(for: url)) }
        var memory = consumer.memory ?? MemorySampler()
        memory.sample()
        let hwm = MemoryProbe.peakResidentBytes() ?? 0
        verify(consumer.bytes == size, "playback: the stream got \(consumer.bytes) of \(size) bytes")
        try waitUntilComplete(store, key: url.absoluteString)
        try verifySample(of: store, key: url.absoluteString, against: file, length: size)
        return PlaybackStream(
            throughput: Self.megabytesPerSecond(size, seconds), memory: memory,
            peakGrowth: firstInProcess && hwm > startHWM ? hwm - memory.startResident : nil,
            peakBacklog: cache.statistics.peakReaderBacklogBytes)
    }

    /// The baseline: `HTTPOrigin` alone fetching the same bytes in 1 MiB ranges, dropping them.
    private func streamOriginAlone(_ url: URL, origin: HTTPOrigin, size: Int) throws -> (
        throughput: Double, memory: MemorySampler
    ) {
        let sampler = Self.Box(MemorySampler())
        let start = Stopwatch.now()
        let received = try Self.blocking { () async throws -> Int in
            var received = 0
            var offset = 0
            while offset < size {
                let response = try await origin.fetch(
                    OriginRequest(url: url, range: offset..<min(size, offset + (1 << 20))))
                for try await piece in response.body { received += piece.count }
                offset += 1 << 20
                sampler.update { $0.sample() }
            }
            return received
        }
        let seconds = Self.seconds(since: start)
        verify(received == size, "playback: HTTPOrigin alone got \(received) of \(size) bytes")
        return (Self.megabytesPerSecond(size, seconds), sampler.value)
    }

    /// Waits (up to 10 s) until the last chunk of `key` is committed.
    private func waitUntilComplete(_ store: MediaStore, key: String) throws {
        for _ in 0..<1000 {
            if try store.info(forKey: key)?.isComplete == true { return }
            usleep(10_000)
        }
        verify(false, "playback: \(key) is not complete in the store")
    }

    /// Compares three 1 MiB stretches of the stored entry with the file.
    private func verifySample(of store: MediaStore, key: String, against file: URL, length: Int) throws {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let span = min(length, 1 << 20)
        for offset in [0, (length / 2) / 4096 * 4096, length - span] {
            try handle.seek(toOffset: UInt64(offset))
            let expected = try handle.read(upToCount: span) ?? Data()
            let stored = try store.read(forKey: key, range: offset..<(offset + span), includeExpired: true)
            verify(
                stored == expected,
                "playback: bytes \(offset)..<\(offset + span) of \(key) differ from the origin's file")
        }
    }

    /// Writes `bytes` random bytes to `url` in 1 MiB pieces.
    static func writeRandomFile(_ url: URL, bytes: Int, seed: UInt64) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var rng = SplitMix64(seed: seed)
        var written = 0
        while written < bytes {
            let piece = Workloads.randomData(min(1 << 20, bytes - written), &rng)
            try handle.write(contentsOf: piece)
            written += piece.count
        }
    }

    /// Seconds to open `url` and read its first `count` bytes.
    private static func timeFirstBytes(of url: URL, count: Int) throws -> Double {
        let start = Stopwatch.now()
        let handle = try FileHandle(forReadingFrom: url)
        let bytes = try handle.read(upToCount: count)
        let seconds = Self.seconds(since: start)
        try handle.close()
        guard bytes?.count == count else { throw CocoaError(.fileReadCorruptFile) }
        return seconds
    }

    /// MB/s reading all of `url` in `pieceSize` pieces.
    private static func readRate(of url: URL, pieceSize: Int) throws -> Double {
        let start = Stopwatch.now()
        let handle = try FileHandle(forReadingFrom: url)
        var total = 0
        while let piece = try handle.read(upToCount: pieceSize), !piece.isEmpty { total += piece.count }
        try handle.close()
        return megabytesPerSecond(total, seconds(since: start))
    }

    /// MB/s reading all of `url` with `read(2)` into one reused buffer of `pieceSize` bytes (no allocation per read).
    private static func posixReadRate(of url: URL, pieceSize: Int) throws -> Double {
        let start = Stopwatch.now()
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.ENOENT) }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: pieceSize)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, pieceSize) }
            guard count > 0 else { break }
            total += count
        }
        return megabytesPerSecond(total, seconds(since: start))
    }

    /// Runs `body` on the cooperative pool and blocks the calling thread until it returns.
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        // Never abandoned: the wait ends with `body`.
        try BlockingWait { () async throws(any Error) -> T in try await body() }.wait()!.get()
    }

    /// A value shared with a task, behind a lock.
    final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value { lock.withLock { stored } }
        func update(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
    }
}
