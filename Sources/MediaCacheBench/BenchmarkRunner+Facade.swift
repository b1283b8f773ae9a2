import Dispatch
import Foundation
import MediaCache
import MediaStore

extension BenchmarkRunner {
    /// The hyperoslo/Cache-compatible facade against the engine it wraps:
    /// 1 KiB set/get and 5 MiB get through `Storage<String, Data>` with a
    /// memory tier too small to help (so the disk path is measured), the
    /// memory tier's hit rate and speed on a skewed workload, and sync and
    /// async calls mixed from two threads.
    func runFacade() throws {
        let w = workloads
        let keys = w.smallKeys()
        let values = w.smallValues().map { Data($0) }
        let setCount = min(w.smallCount, 2_000)
        log("facade: \(setCount) single-commit sets, \(w.smallCount) gets")

        // 1 KiB sets (one commit each) and gets: facade (memory tier of 1) vs engine.
        let engineDirectory = try freshDirectory("facade-engine")
        let facadeDirectory = try freshDirectory("facade-storage")
        defer {
            remove(engineDirectory)
            remove(facadeDirectory)
        }
        let engine = try MediaStore(
            directory: engineDirectory, configuration: StoreConfiguration(sizeAccounting: .logical))
        let storage = try Storage<String, Data>(
            diskConfig: DiskConfig(name: "bench", directory: facadeDirectory),
            memoryConfig: MemoryConfig(countLimit: 1),
            transformer: TransformerFactory.forData())
        var engineSet: [Double] = []
        var facadeSet: [Double] = []
        for repetition in 0..<w.repetitions {
            let block = (repetition * setCount / w.repetitions)..<((repetition + 1) * setCount / w.repetitions)
            engineSet.append(
                Double(block.count)
                    / (try Stopwatch.time {
                        for index in block { try engine.put(values[index], forKey: keys[index]) }
                    }))
            facadeSet.append(
                Double(block.count)
                    / (try Stopwatch.time {
                        for index in block { try storage.setObject(values[index], forKey: keys[index]) }
                    }))
        }
        record(
            "facade set 1 KiB, one commit each (\(setCount) keys; ratio ≥ 0.77 means facade time ≤ 1.3× engine)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(facadeSet),
            baselines: [("engine", Stopwatch.median(engineSet))])
        // The rest one commit each in both, so that both stores hold their
        // values the same way (a batch would pack the engine's several to a
        // row, and the gets below would compare two layouts, not the facade
        // with the engine it wraps).
        for index in setCount..<w.smallCount {
            try engine.put(values[index], forKey: keys[index])
            try storage.setObject(values[index], forKey: keys[index])
        }

        // Engine and facade take turns on blocks of 250 keys (which one goes
        // first alternates), so that both see the same machine: two passes
        // one after the other swung this row's ratio between 0.7× and 1.15×
        // on a shared machine.
        var engineGet: [Double] = []
        var facadeGet: [Double] = []
        // Per pair of neighbouring blocks: the engine's time over the
        // facade's (the facade's rate as a fraction of the engine's).
        var blockRatios: [Double] = []
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: w.smallCount, pass: pass)
            var engineBytes = 0
            var facadeBytes = 0
            var engineSeconds = 0.0
            var facadeSeconds = 0.0
            for (block, start) in stride(from: 0, to: order.count, by: 250).enumerated() {
                let indices = order[start..<min(start + 250, order.count)]
                var engineBlock = 0.0
                var facadeBlock = 0.0
                func timeEngine() throws {
                    engineBlock = try Stopwatch.time {
                        for index in indices { engineBytes += try engine.data(forKey: keys[index])?.count ?? 0 }
                    }
                }
                func timeFacade() throws {
                    facadeBlock = try Stopwatch.time {
                        for index in indices { facadeBytes += try storage.object(forKey: keys[index]).count }
                    }
                }
                if block.isMultiple(of: 2) {
                    try timeEngine()
                    try timeFacade()
                } else {
                    try timeFacade()
                    try timeEngine()
                }
                engineSeconds += engineBlock
                facadeSeconds += facadeBlock
                blockRatios.append(engineBlock / facadeBlock)
            }
            engineGet.append(Double(order.count) / engineSeconds)
            facadeGet.append(Double(order.count) / facadeSeconds)
            verify(engineBytes == facadeBytes, "facade get: \(facadeBytes) bytes, engine \(engineBytes)")
        }
        // The row's ratio divides two medians of whole passes, so a stall
        // in one block (another process, the store's background write of
        // access times) moves it; the median of the paired blocks does
        // not follow one block.
        note(
            String(
                format: "facade get 1 KiB from disk: median of %d paired blocks of 250 gets: %.2f× the engine's rate",
                blockRatios.count, Stopwatch.median(blockRatios)))
        record(
            "facade get 1 KiB from disk (memory tier of 1; \(w.smallCount) keys, random order; engine and facade interleaved by 250)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(facadeGet),
            baselines: [("engine", Stopwatch.median(engineGet))])

        try runFacadeLargeGets()
        try runFacadeMemoryTier(keys: keys, values: values)
        try runFacadeMixedThreads(keys: keys, values: values)
        runMemoryTier(keys: keys, values: values)
    }

    private func runFacadeLargeGets() throws {
        let w = workloads
        let keys = w.largeKeys()
        let values = w.largeValues().map { Data($0) }
        let engineDirectory = try freshDirectory("facade-large-engine")
        let facadeDirectory = try freshDirectory("facade-large-storage")
        defer {
            remove(engineDirectory)
            remove(facadeDirectory)
        }
        let fileDirectory = try freshDirectory("facade-large-files")
        defer { remove(fileDirectory) }
        let engine = try MediaStore(directory: engineDirectory)
        let storage = try Storage<String, Data>(
            diskConfig: DiskConfig(name: "bench", directory: facadeDirectory),
            memoryConfig: MemoryConfig(countLimit: 1),
            transformer: TransformerFactory.forData())
        // hyperoslo/Cache's disk tier: one file per key, read with Data(contentsOf:).
        let files = try FilePerKeyBaseline(directory: fileDirectory)
        for (key, value) in zip(keys, values) {
            try engine.put(value, forKey: key)
            try storage.setObject(value, forKey: key)
            try files.set(value, forKey: key)
        }
        var engineGet: [Double] = []
        var facadeGet: [Double] = []
        var fileGet: [Double] = []
        let total = values.reduce(0) { $0 + $1.count }
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: keys.count, pass: pass)
            var facadeBytes = 0
            var fileBytes = 0
            engineGet.append(
                Self.megabytesPerSecond(
                    total,
                    try Stopwatch.time {
                        for index in order { _ = try engine.data(forKey: keys[index]) }
                    }))
            facadeGet.append(
                Self.megabytesPerSecond(
                    total,
                    try Stopwatch.time {
                        for index in order { facadeBytes += try storage.object(forKey: keys[index]).count }
                    }))
            fileGet.append(
                Self.megabytesPerSecond(
                    total,
                    try Stopwatch.time {
                        for index in order { fileBytes += try Data(contentsOf: files.url(forKey: keys[index])).count }
                    }))
            verify(
                facadeBytes == total && fileBytes == total,
                "facade get 5 MiB: \(facadeBytes) and \(fileBytes) bytes, expected \(total)")
        }
        record(
            "facade get \(Workloads.describe(bytes: w.largeSize)) from disk (\(keys.count) values)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(facadeGet),
            baselines: [
                ("engine", Stopwatch.median(engineGet)),
                ("plain file, Data(contentsOf:) (hyperoslo/Cache's disk read)", Stopwatch.median(fileGet)),
            ])
    }

    /// A skewed read mix (80% of reads on 20% of keys) through a memory
    /// tier holding a tenth of the keys.
    private func runFacadeMemoryTier(keys: [String], values: [Data]) throws {
        let directory = try freshDirectory("facade-memory")
        defer { remove(directory) }
        let capacity = max(1, keys.count / 10)
        let storage = try Storage<String, Data>(
            diskConfig: DiskConfig(name: "bench", directory: directory),
            memoryConfig: MemoryConfig(countLimit: UInt(capacity)),
            transformer: TransformerFactory.forData())
        let engine = storage.hybridStorage.diskStorage
        for (key, value) in zip(keys, values) { try engine.setObject(value, forKey: key) }
        var rng = SplitMix64(seed: 77)
        let hot = keys.count / 5
        let reads = (0..<(keys.count * 2)).map { _ -> Int in
            rng.next() % 10 < 8 ? Int(rng.next() % UInt64(hot)) : hot + Int(rng.next() % UInt64(keys.count - hot))
        }
        var hits = 0
        let memory = storage.hybridStorage.memoryStorage
        for index in reads {
            if memory.objectExists(forKey: keys[index]) { hits += 1 }
            _ = try storage.object(forKey: keys[index])
        }
        let opsPerSecond =
            Double(reads.count)
            / (try Stopwatch.time {
                for index in reads { _ = try storage.object(forKey: keys[index]) }
            })
        let diskOnly =
            Double(reads.count)
            / (try Stopwatch.time {
                for index in reads { _ = try engine.object(forKey: keys[index]) }
            })
        let hitRate = Double(hits) / Double(reads.count)
        note(
            String(
                format: "facade memory tier: %.1f%% hits over %d skewed reads (80%% on 20%% of %d keys, tier holds %d)",
                hitRate * 100, reads.count, keys.count, capacity))
        record(
            "facade get 1 KiB through the memory tier (skewed reads, \(String(format: "%.0f", hitRate * 100))% hits)",
            unit: BenchResult.opsPerSecond, engine: opsPerSecond, baselines: [("disk tier only", diskOnly)])
    }

    /// Thread one calls the sync API, thread two the async API (completion
    /// handlers), on the same storage, half reads and half writes.
    private func runFacadeMixedThreads(keys: [String], values: [Data]) throws {
        let directory = try freshDirectory("facade-threads")
        defer { remove(directory) }
        let storage = try Storage<String, Data>(
            diskConfig: DiskConfig(name: "bench", directory: directory),
            memoryConfig: MemoryConfig(countLimit: 256),
            transformer: TransformerFactory.forData())
        let operations = min(keys.count, 2_000)
        let failures = FailureCounter()
        let group = DispatchGroup()
        let seconds = Stopwatch.time {
            group.enter()
            Thread {
                for index in 0..<operations {
                    do {
                        if index % 2 == 0 {
                            try storage.setObject(values[index], forKey: keys[index])
                        } else {
                            _ = try? storage.object(forKey: keys[index - 1])
                        }
                    } catch {
                        failures.add()
                    }
                }
                group.leave()
            }.start()
            group.enter()
            Thread {
                let done = DispatchSemaphore(value: 0)
                for index in 0..<operations {
                    let key = keys[keys.count - 1 - index]
                    if index % 2 == 0 {
                        storage.async.setObject(values[index], forKey: key) { result in
                            if case .failure = result { failures.add() }
                            done.signal()
                        }
                    } else {
                        storage.async.object(forKey: key) { _ in done.signal() }
                    }
                    done.wait()
                }
                group.leave()
            }.start()
            group.wait()
        }
        verify(failures.count == 0, "facade mixed threads: \(failures.count) failed writes")
        note(
            "facade mixed sync + async from 2 threads: \(2 * operations) operations, \(failures.count) failures, no crash"
        )
        record(
            "facade mixed sync + async from 2 threads (half sets with a commit each, half gets)",
            unit: BenchResult.opsPerSecond, engine: Double(2 * operations) / seconds, baselines: [])
    }
}
