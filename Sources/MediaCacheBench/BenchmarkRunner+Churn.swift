import Foundation
import MediaStore

extension BenchmarkRunner {
    /// Writes values of log-uniform sizes into a size-limited store until
    /// several times the limit went through, then compares the bytes the
    /// data file uses with the live bytes. The baseline is raw-lmdb with
    /// each value as one item and first-in-first-out eviction to the same
    /// cap and low-water mark, in the same transaction as the put.
    func runChurn() throws {
        let w = workloads
        let sizes = w.churnSizes()
        let total = sizes.reduce(0, +)
        let limit = Workloads.describe(bytes: w.churnLimit)
        let range = "\(Workloads.describe(bytes: w.churnMinSize))–\(Workloads.describe(bytes: w.churnMaxSize))"
        log("churn: \(sizes.count) values of \(range), \(Workloads.describe(bytes: total)) into \(limit)")

        // Engine.
        let engineDirectory = try freshDirectory("engine-churn")
        defer { remove(engineDirectory) }
        var engineSeconds = 0.0
        var engineStats: StoreStatistics
        var engineMaxFile = 0
        do {
            let store = try MediaStore(
                directory: engineDirectory, configuration: StoreConfiguration(sizeLimit: w.churnLimit))
            var rng = SplitMix64(seed: Workloads.churnSeed &+ 1)
            for (index, size) in sizes.enumerated() {
                let value = Workloads.randomData(size, &rng)
                let key = w.churnKey(index)
                engineSeconds += try Stopwatch.time { try store.put(value, forKey: key) }
                if index % 16 == 0 { engineMaxFile = max(engineMaxFile, try store.statistics().fileBytes) }
            }
            engineStats = try store.statistics()
            engineMaxFile = max(engineMaxFile, engineStats.fileBytes)
            verify(
                engineStats.storedBytes <= w.churnLimit,
                "engine churn: storedBytes \(engineStats.storedBytes) over the limit \(w.churnLimit)")
            let report = try store.verify()
            verify(report.isClean, "engine churn: verify() found \(report.problems.prefix(3))")
        }

        // raw-lmdb, FIFO.
        let rawDirectory = try freshDirectory("raw-churn")
        defer { remove(rawDirectory) }
        var rawSeconds = 0.0
        var live = 0
        var rawFile = 0
        do {
            let raw = try RawLMDBBaseline(path: rawDirectory.appendingPathComponent("data.mdb").path)
            var rng = SplitMix64(seed: Workloads.churnSeed &+ 1)
            var queue: [(key: [UInt8], size: Int)] = []
            var head = 0
            let lowWater = Int(Double(w.churnLimit) * w.churnLowWater)
            for (index, size) in sizes.enumerated() {
                let value = Workloads.randomData(size, &rng)
                let key = Array(w.churnKey(index).utf8)
                rawSeconds += try Stopwatch.time {
                    try raw.write { txn in
                        try txn.put(value, forKey: key)
                        live += size
                        queue.append((key, size))
                        if live > w.churnLimit {
                            while live > lowWater && head < queue.count {
                                try txn.delete(forKey: queue[head].key)
                                live -= queue[head].size
                                head += 1
                            }
                        }
                    }
                }
            }
            rawFile = raw.usedBytes()
        }

        let name = "file/live after churn (sizeLimit \(limit), \(Workloads.describe(bytes: total)) of \(range) values)"
        record(
            BenchResult(
                name: name, unit: BenchResult.fileToLive, value: engineStats.fileToLiveRatio,
                baseline: "raw-lmdb", baselineValue: live > 0 ? Double(rawFile) / Double(live) : nil))
        record(
            BenchResult(
                name: "set with eviction during churn (\(sizes.count) values, one put per commit)",
                unit: BenchResult.megabytesPerSecond, value: Self.megabytesPerSecond(total, engineSeconds),
                baseline: "raw-lmdb", baselineValue: Self.megabytesPerSecond(total, rawSeconds)))
        let mib = Double(1 << 20)
        note(
            String(
                format:
                    "churn, engine: file %.1f MiB (largest seen %.1f MiB), stored %.1f MiB, %d entries, %d evictions; raw-lmdb FIFO: file %.1f MiB, live %.1f MiB.",
                Double(engineStats.fileBytes) / mib, Double(engineMaxFile) / mib, Double(engineStats.storedBytes) / mib,
                engineStats.entryCount, engineStats.evictions, Double(rawFile) / mib, Double(live) / mib))
    }
}
