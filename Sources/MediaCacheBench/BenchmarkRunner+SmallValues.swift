import Foundation
import MediaStore

extension BenchmarkRunner {
    /// 1 KiB values under URL-like keys: sets with one commit each (the
    /// stores are filled this way, timed in blocks), batched sets, and
    /// gets in a random order.
    func runSmallValues() throws {
        let w = workloads
        let count = Workloads.grouped(w.smallCount)
        let size = Workloads.describe(bytes: w.smallSize)
        log("\(size) values, \(count) keys")
        let keys = w.smallKeys()
        let rawKeys = keys.map { Array($0.utf8) }
        let values = w.smallValues()
        let blocks = stride(from: 0, to: w.smallCount, by: w.singleSetBlock).map {
            $0..<min($0 + w.singleSetBlock, w.smallCount)
        }

        // One put, one commit (each fsyncs). Fills the stores for the gets.
        let engineDirectory = try freshDirectory("engine-small")
        let rawDirectory = try freshDirectory("raw-small")
        let fileDirectory = try freshDirectory("file-small")
        defer {
            remove(engineDirectory)
            remove(rawDirectory)
            remove(fileDirectory)
        }
        let store = try MediaStore(directory: engineDirectory)
        let raw = try RawLMDBBaseline(path: rawDirectory.appendingPathComponent("data.mdb").path)
        let files = try FilePerKeyBaseline(directory: fileDirectory)
        var engineSet: [Double] = []
        var rawSet: [Double] = []
        var fileSet: [Double] = []
        for block in blocks {
            engineSet.append(
                Double(block.count)
                    / (try Stopwatch.time {
                        for index in block { try store.put(values[index], forKey: keys[index]) }
                    }))
            rawSet.append(
                Double(block.count)
                    / (try Stopwatch.time {
                        for index in block { try raw.put(values[index], forKey: rawKeys[index]) }
                    }))
            fileSet.append(
                Double(block.count)
                    / (try Stopwatch.time {
                        for index in block { try files.set(values[index], forKey: keys[index]) }
                    }))
        }
        let engineSingle = Stopwatch.median(engineSet)
        let fileSingle = Stopwatch.median(fileSet)
        record(
            "set \(size), one put per commit (\(count) keys, median of \(blocks.count) blocks)",
            unit: BenchResult.opsPerSecond, engine: engineSingle,
            baselines: [("raw-lmdb", Stopwatch.median(rawSet)), ("file-per-key", fileSingle)])

        // Batched: every key in one transaction (engine: performBatch).
        var engineBatched: [Double] = []
        var rawBatched: [Double] = []
        for _ in 0..<w.repetitions {
            let engineBatchDirectory = try freshDirectory("engine-small-batched")
            let rawBatchDirectory = try freshDirectory("raw-small-batched")
            defer {
                remove(engineBatchDirectory)
                remove(rawBatchDirectory)
            }
            let batchStore = try MediaStore(directory: engineBatchDirectory)
            engineBatched.append(
                Double(w.smallCount)
                    / (try Stopwatch.time {
                        try batchStore.performBatch { batch in
                            for index in 0..<w.smallCount { try batch.put(values[index], forKey: keys[index]) }
                        }
                    }))
            let batched = try RawLMDBBaseline(path: rawBatchDirectory.appendingPathComponent("data.mdb").path)
            rawBatched.append(
                Double(w.smallCount)
                    / (try Stopwatch.time {
                        try batched.write { txn in
                            for index in 0..<w.smallCount { try txn.put(values[index], forKey: rawKeys[index]) }
                        }
                    }))
        }
        record(
            "set \(size) batched (\(count) puts in one transaction: engine performBatch, raw-lmdb one txn)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineBatched),
            baselines: [("raw-lmdb", Stopwatch.median(rawBatched)), ("file-per-key", fileSingle)])

        try runConcurrentSets(keys: keys, values: values, singleThreaded: engineSingle)

        // Gets, all keys in a random order per pass.
        var engineGet: [Double] = []
        var rawGet: [Double] = []
        var fileGet: [Double] = []
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: w.smallCount, pass: pass)
            var engineBytes = 0
            var rawBytes = 0
            var fileBytes = 0
            engineGet.append(
                Double(order.count)
                    / (try Stopwatch.time {
                        for index in order { engineBytes += try store.data(forKey: keys[index])?.count ?? 0 }
                    }))
            rawGet.append(
                Double(order.count)
                    / (try Stopwatch.time {
                        for index in order { rawBytes += try raw.data(forKey: rawKeys[index])?.count ?? 0 }
                    }))
            fileGet.append(
                Double(order.count)
                    / Stopwatch.time {
                        for index in order { fileBytes += files.data(forKey: keys[index])?.count ?? 0 }
                    })
            let expected = w.smallCount * w.smallSize
            verify(engineBytes == expected, "engine get \(size): \(engineBytes) bytes read, expected \(expected)")
            verify(rawBytes == expected, "raw-lmdb get \(size): \(rawBytes) bytes read, expected \(expected)")
            verify(fileBytes == expected, "file-per-key get \(size): \(fileBytes) bytes read, expected \(expected)")
        }
        record(
            "get \(size) (\(count) keys, random order, median of \(w.getPasses) passes)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineGet),
            baselines: [("raw-lmdb", Stopwatch.median(rawGet)), ("file-per-key", Stopwatch.median(fileGet))])

        // Where the engine's get time goes (outside the timings).
        let threshold = 0.000_25
        let profile = try Self.profileCalls(Workloads.order(count: w.smallCount, pass: 50), slowerThan: threshold) {
            index in
            _ = try store.data(forKey: keys[index])
        }
        note(
            "engine get \(size), each call timed: " + profile.summary(threshold: threshold)
                + " (slow calls: waiting for the background access-time flush every 2,048 reads, or the CPU it takes).")

        // Every value reads back exactly (outside the timings).
        var wrong = 0
        for index in 0..<w.smallCount where try store.data(forKey: keys[index]) != values[index] { wrong += 1 }
        verify(wrong == 0, "engine: \(wrong) of \(w.smallCount) small values read back different")
        let stats = try store.statistics()
        verify(stats.entryCount == w.smallCount, "engine: entryCount \(stats.entryCount), expected \(w.smallCount)")
    }

    /// Sets from four threads at once, one put per call: the engine's
    /// concurrent writes share commits (group commit); raw-lmdb's four
    /// writers each commit their own transaction. The keys are the first
    /// 2,000 of the small set, each thread a quarter; written into fresh
    /// stores, median of the repetitions.
    private func runConcurrentSets(keys: [String], values: [Data], singleThreaded: Double) throws {
        let threads = 4
        let count = min(keys.count, 2_000)
        let rawKeys = keys.map { Array($0.utf8) }
        var engineRates: [Double] = []
        var rawRates: [Double] = []
        var commits: [Int] = []
        for _ in 0..<workloads.repetitions {
            let engineDirectory = try freshDirectory("engine-small-threads")
            let rawDirectory = try freshDirectory("raw-small-threads")
            defer {
                remove(engineDirectory)
                remove(rawDirectory)
            }
            let store = try MediaStore(directory: engineDirectory)
            let firstCommit = Self.lastCommit(engineDirectory)
            let failures = FailureCounter()
            engineRates.append(
                Double(count)
                    / Stopwatch.time {
                        Self.onThreads(threads, count: count) { index in
                            do { try store.put(values[index], forKey: keys[index]) } catch { failures.add() }
                        }
                    })
            commits.append(Int(Self.lastCommit(engineDirectory) - firstCommit))
            let raw = UncheckedBox(try RawLMDBBaseline(path: rawDirectory.appendingPathComponent("data.mdb").path))
            rawRates.append(
                Double(count)
                    / Stopwatch.time {
                        Self.onThreads(threads, count: count) { index in
                            do { try raw.value.put(values[index], forKey: rawKeys[index]) } catch { failures.add() }
                        }
                    })
            verify(failures.count == 0, "concurrent sets: \(failures.count) failed puts")
        }
        note(
            "set 1 KiB from \(threads) threads: the engine's \(count) puts took \(Int(Stopwatch.median(commits.map(Double.init)))) commits (median of \(commits.count)), raw-lmdb's one each"
        )
        record(
            "set 1 KiB from \(threads) threads at once, one put per call (\(Workloads.grouped(count)) keys; engine writes share commits)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(engineRates),
            baselines: [
                ("raw-lmdb, 4 threads, a commit each", Stopwatch.median(rawRates)),
                ("engine, one thread", singleThreaded),
            ])
    }

    /// The id of the last transaction committed to the store in
    /// `directory`, from its meta pages (one more per commit).
    private static func lastCommit(_ directory: URL) -> UInt64 {
        let check = MetaPageCheck.read(path: directory.appendingPathComponent("data.mdb").path)
        return max(check?.metas.0?.txnid ?? 0, check?.metas.1?.txnid ?? 0)
    }

    /// Runs `body` for indices `0..<count` split over `threads` threads; returns when all are done.
    private static func onThreads(_ threads: Int, count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                for index in stride(from: thread, to: count, by: threads) { body(index) }
                group.leave()
            }.start()
        }
        group.wait()
    }
}

/// Hands a value that is safe to share (here an LMDB environment, whose
/// write transactions serialize on LMDB's own lock) to other threads.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
