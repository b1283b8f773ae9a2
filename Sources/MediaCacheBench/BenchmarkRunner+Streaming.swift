import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension BenchmarkRunner {
    /// What one streaming repetition measured.
    struct StreamMeasurement {
        /// MB/s.
        var throughput: Double
        /// Resident-memory growth, sampled every MiB appended.
        var memory: MemorySampler
        /// `VmHWM` minus `VmRSS` at the start, when the stream was the
        /// first thing in the process to allocate much; otherwise `nil`.
        var peakGrowth: Int?
    }

    /// Streams one large value in, in fixed pieces: the engine through
    /// ``EntryWriter``; raw-lmdb as 256 KiB chunk items committed every
    /// 4 MiB (as the engine's writer commits); file-per-key as
    /// `FileHandle` appends to a temporary file, fsynced and renamed into
    /// place. Reports throughput and the engine's peak resident-memory growth.
    func runStreaming() throws {
        let w = workloads
        let size = Workloads.describe(bytes: w.streamBytes)
        log("stream \(size) in \(Workloads.describe(bytes: w.streamPiece)) pieces")
        var engine: [StreamMeasurement] = []
        var raw: [StreamMeasurement] = []
        var files: [Double] = []
        for repetition in 0..<w.repetitions {
            engine.append(try streamEngine(firstInProcess: repetition == 0 && results.isEmpty))
            raw.append(try streamRawLMDB())
            files.append(try streamFile())
            log(
                String(
                    format:
                        "  repetition %d: engine %.0f MB/s (+%.1f MiB RSS), raw-lmdb %.0f MB/s (+%.1f MiB RSS), file-per-key %.0f MB/s",
                    repetition + 1, engine[repetition].throughput,
                    Self.mebibytes(engine[repetition].memory.totalGrowth),
                    raw[repetition].throughput, Self.mebibytes(raw[repetition].memory.totalGrowth), files[repetition]))
        }
        let name = "stream \(size) in (EntryWriter, \(Workloads.describe(bytes: w.streamPiece)) appends)"
        record(
            name, unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(engine.map(\.throughput)),
            baselines: [
                ("raw-lmdb", Stopwatch.median(raw.map(\.throughput))), ("file-per-key", Stopwatch.median(files)),
            ])

        let sampled = engine.map(\.memory.totalGrowth).max() ?? 0
        let peak = engine.compactMap(\.peakGrowth).max()
        let rawSampled = raw.map(\.memory.totalGrowth).max() ?? 0
        record(
            BenchResult(
                name: "stream \(size) in: peak RSS growth (VmHWM/VmRSS, worst repetition)",
                unit: BenchResult.mebibytes, value: Self.mebibytes(max(sampled, peak ?? 0)),
                baseline: "raw-lmdb", baselineValue: Self.mebibytes(rawSampled)))
        let parts = { (samples: [StreamMeasurement]) -> String in
            String(
                format: "anonymous +%.1f MiB, file-backed +%.1f MiB",
                Self.mebibytes(samples.map(\.memory.anonymousGrowth).max() ?? 0),
                Self.mebibytes(samples.map(\.memory.fileGrowth).max() ?? 0))
        }
        note(
            String(
                format:
                    "stream RSS growth (target < 64 MiB): engine VmRSS sampled every MiB +%.1f MiB (%@)%@; raw-lmdb +%.1f MiB (%@).",
                Self.mebibytes(sampled), parts(engine),
                peak.map { String(format: ", VmHWM − start VmRSS of the first stream +%.1f MiB", Self.mebibytes($0)) }
                    ?? "",
                Self.mebibytes(rawSampled), parts(raw)))
    }

    static func mebibytes(_ bytes: Int) -> Double {
        Double(bytes) / Double(1 << 20)
    }

    /// Samples memory once per MiB of `pieceSize` pieces.
    private static func samplesMemory(afterPiece count: Int, pieceSize: Int) -> Bool {
        count % max(1, (1 << 20) / pieceSize) == 0
    }

    /// One engine repetition.
    private func streamEngine(firstInProcess: Bool) throws -> StreamMeasurement {
        let w = workloads
        let directory = try freshDirectory("engine-stream")
        defer { remove(directory) }
        let key = "https://media.example.com/v1/streams/long-mix.bin"
        let startHWM = MemoryProbe.peakResidentBytes() ?? 0
        var memory = MemorySampler()
        var seconds = 0.0
        var firstPiece: [UInt8] = []
        let store = try MediaStore(directory: directory)
        var rng = SplitMix64(seed: Workloads.streamSeed)
        var piece = [UInt8](repeating: 0, count: w.streamPiece)
        var start = Stopwatch.now()
        let writer = try store.makeWriter(forKey: key, expectedLength: w.streamBytes)
        seconds += Self.seconds(since: start)
        var appended = 0
        var count = 0
        while appended < w.streamBytes {
            let length = min(w.streamPiece, w.streamBytes - appended)
            if piece.count != length { piece = [UInt8](repeating: 0, count: length) }
            piece.withUnsafeMutableBytes { rng.fill($0) }
            start = Stopwatch.now()
            try writer.append(piece)
            seconds += Self.seconds(since: start)
            if appended == 0 { firstPiece = piece }
            appended += length
            count += 1
            if Self.samplesMemory(afterPiece: count, pieceSize: w.streamPiece) { memory.sample() }
        }
        start = Stopwatch.now()
        let info = try writer.finish()
        seconds += Self.seconds(since: start)
        memory.sample()
        let hwm = MemoryProbe.peakResidentBytes() ?? 0
        let peakGrowth = firstInProcess ? max(0, hwm > startHWM ? hwm - memory.startResident : 0) : nil

        verify(
            info.isComplete && info.length == w.streamBytes,
            "streamed entry: complete \(info.isComplete), length \(String(describing: info.length)), expected \(w.streamBytes)"
        )
        let head = try store.read(forKey: key, range: 0..<firstPiece.count)
        verify(head == Data(firstPiece), "streamed entry: the first piece reads back different")
        let tail = try store.read(forKey: key, range: (w.streamBytes - piece.count)..<w.streamBytes)
        verify(tail == Data(piece), "streamed entry: the last piece reads back different")
        let stats = try store.statistics()
        verify(
            stats.logicalBytes == w.streamBytes,
            "streamed entry: logicalBytes \(stats.logicalBytes), expected \(w.streamBytes)")
        return StreamMeasurement(
            throughput: Self.megabytesPerSecond(w.streamBytes, seconds), memory: memory, peakGrowth: peakGrowth)
    }

    /// raw-lmdb: 256 KiB chunk items keyed by index, a commit per 4 MiB.
    private func streamRawLMDB() throws -> StreamMeasurement {
        let w = workloads
        let directory = try freshDirectory("raw-stream")
        defer { remove(directory) }
        var memory = MemorySampler()
        let raw = try RawLMDBBaseline(path: directory.appendingPathComponent("data.mdb").path)
        var rng = SplitMix64(seed: Workloads.streamSeed)
        var piece = [UInt8](repeating: 0, count: w.streamPiece)
        var chunk: [UInt8] = []
        chunk.reserveCapacity(w.rawChunkSize)
        var pending: [[UInt8]] = []
        var pendingBytes = 0
        var chunkIndex = 0
        var seconds = 0.0
        func flush() throws {
            guard !pending.isEmpty else { return }
            let first = chunkIndex
            try raw.write { txn in
                for (offset, bytes) in pending.enumerated() {
                    try txn.put(bytes, forKey: RawLMDBBaseline.chunkKey(entry: 1, index: first + offset))
                }
            }
            chunkIndex += pending.count
            pending.removeAll(keepingCapacity: true)
            pendingBytes = 0
        }
        var appended = 0
        var count = 0
        while appended < w.streamBytes {
            let length = min(w.streamPiece, w.streamBytes - appended)
            if piece.count != length { piece = [UInt8](repeating: 0, count: length) }
            piece.withUnsafeMutableBytes { rng.fill($0) }
            let start = Stopwatch.now()
            var offset = 0
            while offset < length {
                let take = min(w.rawChunkSize - chunk.count, length - offset)
                chunk.append(contentsOf: piece[offset..<offset + take])
                offset += take
                if chunk.count == w.rawChunkSize {
                    pending.append(chunk)
                    pendingBytes += chunk.count
                    chunk.removeAll(keepingCapacity: true)
                    if pendingBytes >= w.streamCommitBytes { try flush() }
                }
            }
            seconds += Self.seconds(since: start)
            appended += length
            count += 1
            if Self.samplesMemory(afterPiece: count, pieceSize: w.streamPiece) { memory.sample() }
        }
        let start = Stopwatch.now()
        if !chunk.isEmpty { pending.append(chunk) }
        try flush()
        seconds += Self.seconds(since: start)
        memory.sample()
        let stored = try raw.read { txn in
            try txn.withValue(forKey: RawLMDBBaseline.chunkKey(entry: 1, index: chunkIndex - 1)) { $0?.count ?? 0 }
        }
        verify(stored > 0, "raw-lmdb stream: the last chunk is missing")
        return StreamMeasurement(
            throughput: Self.megabytesPerSecond(w.streamBytes, seconds), memory: memory, peakGrowth: nil)
    }

    /// file-per-key: appends to a temporary file, fsyncs it, renames it into place.
    private func streamFile() throws -> Double {
        let w = workloads
        let directory = try freshDirectory("file-stream")
        defer { remove(directory) }
        let files = try FilePerKeyBaseline(directory: directory)
        let target = files.url(forKey: "https://media.example.com/v1/streams/long-mix.bin")
        let temporary = directory.appendingPathComponent(".partial-\(UUID().uuidString)")
        var rng = SplitMix64(seed: Workloads.streamSeed)
        var piece = [UInt8](repeating: 0, count: w.streamPiece)
        var start = Stopwatch.now()
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        let handle = try FileHandle(forWritingTo: temporary)
        var seconds = Self.seconds(since: start)
        var appended = 0
        while appended < w.streamBytes {
            let length = min(w.streamPiece, w.streamBytes - appended)
            if piece.count != length { piece = [UInt8](repeating: 0, count: length) }
            piece.withUnsafeMutableBytes { rng.fill($0) }
            start = Stopwatch.now()
            try handle.write(contentsOf: piece)
            seconds += Self.seconds(since: start)
            appended += length
        }
        start = Stopwatch.now()
        try handle.synchronize()  // fsync, as the engine's commits do
        try handle.close()
        guard rename(temporary.path, target.path) == 0 else { throw POSIXError(.EIO) }
        seconds += Self.seconds(since: start)
        let attributes = try FileManager.default.attributesOfItem(atPath: target.path)
        verify((attributes[.size] as? NSNumber)?.intValue == w.streamBytes, "file-per-key stream: wrong file size")
        return Self.megabytesPerSecond(w.streamBytes, seconds)
    }
}
