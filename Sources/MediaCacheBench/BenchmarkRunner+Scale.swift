import Foundation
import MediaStore

extension BenchmarkRunner {
    /// Issue 12's `scale` group (opt-in: `--only scale`, size with
    /// `--scale-entries N`): N entries of 1 KiB filled in batches, the
    /// store reopened, random gets against raw-lmdb on the same keys and
    /// values, `statistics()`, `removeExpired()` of a tenth of the entries,
    /// `verify()`, and the file size against the logical bytes.
    ///
    /// Keys and values are made from their index on the fly (nothing is
    /// held in memory), so a million entries cost only disk.
    func runScale() throws {
        let count = options.scaleEntries ?? (options.quick ? 20_000 : 1_000_000)
        let size = 1 << 10
        let batch = 10_000
        let label = Workloads.grouped(count)
        log("scale: \(label) entries of 1 KiB")
        let engineDirectory = try freshDirectory("engine-scale")
        let rawDirectory = try freshDirectory("raw-scale")
        defer {
            remove(engineDirectory)
            remove(rawDirectory)
        }
        // A tenth of the entries (index % 10 == 0) expire one second after the fill started.
        let expiry = Date().addingTimeInterval(1)
        var value = Data(count: size)

        // Fill, in batches of `batch` puts per transaction.
        var store: MediaStore? = try MediaStore(directory: engineDirectory)
        let engineFill = try Stopwatch.time {
            for first in stride(from: 0, to: count, by: batch) {
                try store!.performBatch { writes in
                    for index in first..<min(first + batch, count) {
                        Self.scaleValue(index, into: &value)
                        let options = WriteOptions(expiry: index % 10 == 0 ? .at(expiry) : .never)
                        try writes.put(value, forKey: Self.scaleKey(index), options: options)
                    }
                }
            }
        }
        let raw = try RawLMDBBaseline(path: rawDirectory.appendingPathComponent("data.mdb").path, mapSize: 64 << 30)
        let rawFill = try Stopwatch.time {
            for first in stride(from: 0, to: count, by: batch) {
                try raw.write { txn in
                    for index in first..<min(first + batch, count) {
                        Self.scaleValue(index, into: &value)
                        try txn.put(value, forKey: Array(Self.scaleKey(index).utf8))
                    }
                }
            }
        }
        // The same puts into raw LMDB under 8-byte keys in random order:
        // the engine's index is keyed by a hash of the key, so its inserts
        // land all over the tree, while the URLs above, put in order, share
        // a few leaf pages per batch.
        let hashedDirectory = try freshDirectory("raw-hashed-scale")
        defer { remove(hashedDirectory) }
        let hashed = try RawLMDBBaseline(
            path: hashedDirectory.appendingPathComponent("data.mdb").path, mapSize: 64 << 30)
        let hashedFill = try Stopwatch.time {
            for first in stride(from: 0, to: count, by: batch) {
                try hashed.write { txn in
                    for index in first..<min(first + batch, count) {
                        Self.scaleValue(index, into: &value)
                        var rng = SplitMix64(seed: Workloads.keySeed ^ UInt64(index))
                        try txn.put(value, forKey: withUnsafeBytes(of: rng.next().bigEndian) { Array($0) })
                    }
                }
            }
        }
        record(
            "scale: fill \(label) × 1 KiB (batches of \(Workloads.grouped(batch)) puts per transaction)",
            unit: BenchResult.opsPerSecond, engine: Double(count) / engineFill,
            baselines: [
                ("raw-lmdb", Double(count) / rawFill),
                ("raw-lmdb, 8-byte keys in random order (as the engine's hashed index)", Double(count) / hashedFill),
            ])

        // Reopen: the time to open a store of this size (median of 3).
        var opens: [Double] = []
        for _ in 0..<3 {
            store?.close()
            store = nil
            opens.append(try Stopwatch.time { store = try MediaStore(directory: engineDirectory) })
        }
        let engine = store!
        record(
            BenchResult(
                name: "scale: open a store of \(label) entries (median of 3 reopenings; target < 20 ms)",
                unit: "ms (lower is better)", value: Stopwatch.median(opens) * 1e3))

        // Random gets of unexpiring entries, the same keys for both.
        let getCount = min(100_000, count)
        var rng = SplitMix64(seed: Workloads.orderSeed &+ 12)
        let picks = (0..<getCount).map { _ -> Int in
            let index = Int(rng.next() % UInt64(count))
            return index % 10 == 0 ? (index + 1) % count : index
        }
        let keys = picks.map { Self.scaleKey($0) }
        let rawKeys = keys.map { Array($0.utf8) }
        // The engine and raw-lmdb take turns on blocks of 5,000 keys (which
        // one goes first alternates), so that both see the same machine: a
        // whole pass of one then of the other swung the ratio by ±0.07.
        var engineGets: [Double] = []
        var rawGets: [Double] = []
        for _ in 0..<workloads.repetitions {
            var engineBytes = 0
            var rawBytes = 0
            var engineSeconds = 0.0
            var rawSeconds = 0.0
            for (block, start) in stride(from: 0, to: getCount, by: 5_000).enumerated() {
                let range = start..<min(start + 5_000, getCount)
                func timeEngine() throws {
                    engineSeconds += try Stopwatch.time {
                        for key in keys[range] { engineBytes += try engine.data(forKey: key)?.count ?? 0 }
                    }
                }
                func timeRaw() throws {
                    rawSeconds += try Stopwatch.time {
                        for key in rawKeys[range] { rawBytes += try raw.data(forKey: key)?.count ?? 0 }
                    }
                }
                if block.isMultiple(of: 2) {
                    try timeEngine()
                    try timeRaw()
                } else {
                    try timeRaw()
                    try timeEngine()
                }
            }
            engineGets.append(Double(getCount) / engineSeconds)
            rawGets.append(Double(getCount) / rawSeconds)
            verify(
                engineBytes == getCount * size,
                "scale: engine gets read \(engineBytes) bytes, expected \(getCount * size)")
            verify(
                rawBytes == getCount * size, "scale: raw-lmdb gets read \(rawBytes) bytes, expected \(getCount * size)")
        }
        record(
            "scale: get 1 KiB, \(Workloads.grouped(getCount)) random keys of \(label) (median of \(workloads.repetitions) passes, interleaved by 5,000; target ≥ 0.45×)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineGets),
            baselines: [("raw-lmdb", Stopwatch.median(rawGets))])
        var wrong = 0
        for index in picks.prefix(1_000) {
            Self.scaleValue(index, into: &value)
            if try engine.data(forKey: Self.scaleKey(index)) != value { wrong += 1 }
        }
        verify(wrong == 0, "scale: \(wrong) of 1,000 sampled values read back different")

        // statistics(), and the file against the logical bytes.
        var stats = try engine.statistics()
        let statisticsSeconds = try Stopwatch.time { stats = try engine.statistics() }
        verify(stats.entryCount == count, "scale: entryCount \(stats.entryCount), expected \(count)")
        record(
            BenchResult(
                name: "scale: statistics() of \(label) entries", unit: "µs (lower is better)",
                value: statisticsSeconds * 1e6))
        let logical = Double(count * size)
        record(
            "scale: file bytes / logical bytes, \(label) × 1 KiB (target ≤ 1.6)", unit: BenchResult.fileToLive,
            engine: Double(stats.fileBytes) / logical,
            baselines: [("raw-lmdb, same keys", Double(raw.usedBytes()) / logical)])
        note(
            String(
                format:
                    "scale: engine file %.2f GB (used %.2f GB by statistics), raw-lmdb used %.2f GB, for %.2f GB of values.",
                Double(Self.fileSize(engineDirectory)) / 1e9, Double(stats.fileBytes) / 1e9,
                Double(raw.usedBytes()) / 1e9, logical / 1e9))

        // removeExpired(): the tenth that expired.
        let wait = expiry.timeIntervalSinceNow
        if wait > 0 { Thread.sleep(forTimeInterval: wait + 0.01) }
        var removed = 0
        let removeSeconds = try Stopwatch.time { removed = try engine.removeExpired() }
        let expected = (count + 9) / 10
        verify(removed == expected, "scale: removeExpired removed \(removed), expected \(expected)")
        record(
            BenchResult(
                name:
                    "scale: removeExpired() of \(Workloads.grouped(expected)) expired entries among \(label) (one call)",
                unit: "entries/s (higher is better)", value: Double(removed) / removeSeconds))
        note(String(format: "scale: removeExpired() took %.2f s.", removeSeconds))

        // verify(): every record, chunk and counter.
        var report: VerificationReport?
        let verifySeconds = try Stopwatch.time { report = try engine.verify() }
        guard let report else { return }
        verify(
            report.problems.isEmpty,
            "scale: verify() found \(report.problems.count) problems: \(report.problems.prefix(3))")
        record(
            BenchResult(
                name: "scale: verify() of \(Workloads.grouped(report.entries)) entries",
                unit: "entries/s (higher is better)",
                value: Double(report.entries) / verifySeconds))
        note(
            String(
                format: "scale: verify() took %.2f s (%.0f MB/s of values).", verifySeconds,
                Double(report.entries * size) / verifySeconds / 1e6))
    }

    /// The URL-like key of scale entry `index` (about 90 bytes).
    static func scaleKey(_ index: Int) -> String {
        var rng = SplitMix64(seed: Workloads.keySeed ^ (UInt64(index) &* 0x9E37_79B9))
        let token = String(rng.next(), radix: 16) + String(rng.next(), radix: 16)
        return "https://media.example.com/v1/tracks/\(index)/segment-\(index % 97).m4s?token=\(token)"
    }

    /// Fills `value` with the random bytes of scale entry `index`.
    static func scaleValue(_ index: Int, into value: inout Data) {
        var rng = SplitMix64(seed: Workloads.smallSeed &+ UInt64(index) &* 0x1000_0001)
        value.withUnsafeMutableBytes { rng.fill($0) }
    }

    /// Bytes of the regular files in `directory` (not recursive).
    static func fileSize(_ directory: URL) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.reduce(0) { total, name in
            let path = directory.appendingPathComponent(name).path
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            return total + size
        }
    }
}
