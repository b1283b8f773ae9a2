import Foundation
import MediaStore

extension BenchmarkRunner {
    /// 5 MiB values: sets with one commit each into a fresh store per
    /// repetition, then gets in a random order.
    func runLargeValues() throws {
        let w = workloads
        let size = Workloads.describe(bytes: w.largeSize)
        log("\(size) values ×\(w.largeCount)")
        let keys = w.largeKeys()
        let rawKeys = keys.map { Array($0.utf8) }
        let values = w.largeValues()
        let totalBytes = w.largeCount * w.largeSize
        var engineSet: [Double] = []
        var rawSet: [Double] = []
        var fileSet: [Double] = []
        var store: MediaStore?
        var raw: RawLMDBBaseline?
        var files: FilePerKeyBaseline?
        var directories: [URL] = []
        defer {
            store = nil
            raw = nil
            for directory in directories { remove(directory) }
        }
        for repetition in 0..<w.repetitions {
            // The last repetition's stores stay for the gets.
            for directory in directories { remove(directory) }
            store = nil
            raw = nil
            let engineDirectory = try freshDirectory("engine-large")
            let rawDirectory = try freshDirectory("raw-large")
            let fileDirectory = try freshDirectory("file-large")
            directories = [engineDirectory, rawDirectory, fileDirectory]
            let engine = try MediaStore(directory: engineDirectory)
            let baseline = try RawLMDBBaseline(path: rawDirectory.appendingPathComponent("data.mdb").path)
            let perKey = try FilePerKeyBaseline(directory: fileDirectory)
            let order = Workloads.order(count: w.largeCount, pass: repetition)
            engineSet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { try engine.put(values[index], forKey: keys[index]) }
                    }))
            rawSet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { try baseline.put(values[index], forKey: rawKeys[index]) }
                    }))
            fileSet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { try perKey.set(values[index], forKey: keys[index]) }
                    }))
            store = engine
            raw = baseline
            files = perKey
        }
        record(
            "set \(size), one put per commit (\(w.largeCount) values)", unit: BenchResult.megabytesPerSecond,
            engine: Stopwatch.median(engineSet),
            baselines: [("raw-lmdb", Stopwatch.median(rawSet)), ("file-per-key", Stopwatch.median(fileSet))])

        guard let store, let raw, let files else { return }
        var engineGet: [Double] = []
        var rawGet: [Double] = []
        var fileGet: [Double] = []
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: w.largeCount, pass: pass + 100)
            var engineBytes = 0
            var rawBytes = 0
            var fileBytes = 0
            engineGet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { engineBytes += try store.data(forKey: keys[index])?.count ?? 0 }
                    }))
            rawGet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { rawBytes += try raw.data(forKey: rawKeys[index])?.count ?? 0 }
                    }))
            fileGet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    Stopwatch.time {
                        for index in order { fileBytes += files.data(forKey: keys[index])?.count ?? 0 }
                    }))
            verify(engineBytes == totalBytes, "engine get \(size): \(engineBytes) bytes read, expected \(totalBytes)")
            verify(rawBytes == totalBytes, "raw-lmdb get \(size): \(rawBytes) bytes read, expected \(totalBytes)")
            verify(fileBytes == totalBytes, "file-per-key get \(size): \(fileBytes) bytes read, expected \(totalBytes)")
        }
        record(
            "get \(size) (\(w.largeCount) values, random order, median of \(w.getPasses) passes)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(engineGet),
            baselines: [("raw-lmdb", Stopwatch.median(rawGet)), ("file-per-key", Stopwatch.median(fileGet))])

        // Cold: one pass right after reopening the store, so that every
        // chunk is hashed (the passes above hash only on their first read).
        var coldGet: [Double] = []
        var reopened = store
        for repetition in 0..<w.repetitions {
            reopened.close()
            reopened = try MediaStore(directory: directories[0])
            let order = Workloads.order(count: w.largeCount, pass: repetition + 200)
            var coldBytes = 0
            coldGet.append(
                Self.megabytesPerSecond(
                    totalBytes,
                    try Stopwatch.time {
                        for index in order { coldBytes += try reopened.data(forKey: keys[index])?.count ?? 0 }
                    }))
            verify(coldBytes == totalBytes, "engine cold get \(size): \(coldBytes) bytes read, expected \(totalBytes)")
        }
        record(
            "get \(size), cold: the first read of each value after reopening the store (median of \(w.repetitions))",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(coldGet),
            baselines: [("raw-lmdb", Stopwatch.median(rawGet))])
        var wrong = 0
        for index in 0..<w.largeCount where try reopened.data(forKey: keys[index]) != values[index] { wrong += 1 }
        verify(wrong == 0, "engine: \(wrong) of \(w.largeCount) \(size) values read back different")
        let stats = try reopened.statistics()
        note(
            String(
                format: "%@ store after sets: stored %.1f MiB for %.1f MiB of values, file %.1f MiB.", size,
                Double(stats.storedBytes) / Double(1 << 20), Double(totalBytes) / Double(1 << 20),
                Double(stats.fileBytes) / Double(1 << 20)))
    }
}
