import Foundation
import MediaCache

extension BenchmarkRunner {
    /// `MemoryStorage` used on its own, against the memory tier
    /// hyperoslo/Cache users come from (an `NSCache`): sets that evict
    /// (a tenth of the keys fit; the two take turns by blocks of 1,000)
    /// and gets that hit. Both take the same keys and `Data` values in
    /// the same random order.
    func runMemoryTier(keys: [String], values: [Data]) {
        let w = workloads
        let capacity = max(1, keys.count / 10)
        let memory = MemoryStorage<String, Data>(config: MemoryConfig(countLimit: UInt(capacity)))
        let cache = NSCache<NSString, NSData>()
        cache.countLimit = capacity
        let cacheKeys = keys.map { $0 as NSString }
        let cacheValues = values.map { $0 as NSData }
        var memorySet: [Double] = []
        var cacheSet: [Double] = []
        var memoryGet: [Double] = []
        var cacheGet: [Double] = []
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: keys.count, pass: pass)
            var memorySeconds = 0.0
            var cacheSeconds = 0.0
            for start in stride(from: 0, to: order.count, by: 1_000) {
                let block = order[start..<min(start + 1_000, order.count)]
                memorySeconds += Stopwatch.time {
                    for index in block {
                        memory.setObject(values[index], forKey: keys[index], cost: values[index].count)
                    }
                }
                cacheSeconds += Stopwatch.time {
                    for index in block { cache.setObject(cacheValues[index], forKey: cacheKeys[index]) }
                }
            }
            memorySet.append(Double(order.count) / memorySeconds)
            cacheSet.append(Double(order.count) / cacheSeconds)
        }
        verify(memory.count == capacity, "memory tier set: holds \(memory.count) objects, limit \(capacity)")

        // Gets that hit: fresh tiers holding `capacity` keys, so that no
        // eviction decides what they hold (NSCache on Linux evicts the
        // newest insert: after the sets above it holds about a tenth of
        // the last keys set).
        let held = Array(Workloads.order(count: keys.count, pass: 0).prefix(capacity))
        let hitMemory = MemoryStorage<String, Data>(config: MemoryConfig(countLimit: UInt(capacity)))
        let hitCache = NSCache<NSString, NSData>()
        hitCache.countLimit = capacity
        for index in held {
            hitMemory.setObject(values[index], forKey: keys[index], cost: values[index].count)
            hitCache.setObject(cacheValues[index], forKey: cacheKeys[index])
        }
        let rounds = max(1, keys.count / capacity)
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: held.count, pass: pass).map { held[$0] }
            var memoryBytes = 0
            var cacheBytes = 0
            memoryGet.append(
                Double(order.count * rounds)
                    / Stopwatch.time {
                        for _ in 0..<rounds {
                            for index in order {
                                memoryBytes += (try? hitMemory.object(forKey: keys[index]))?.count ?? 0
                            }
                        }
                    })
            cacheGet.append(
                Double(order.count * rounds)
                    / Stopwatch.time {
                        for _ in 0..<rounds {
                            for index in order { cacheBytes += hitCache.object(forKey: cacheKeys[index])?.count ?? 0 }
                        }
                    })
            let expected = order.count * rounds * w.smallSize
            verify(
                memoryBytes == expected && cacheBytes == expected,
                "memory tier get: \(memoryBytes) bytes, NSCache \(cacheBytes), expected \(expected)")
        }
        record(
            "memory tier set 1 KiB, MemoryStorage on its own (holds \(capacity) of \(keys.count) keys: every set evicts)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(memorySet),
            baselines: [("NSCache (hyperoslo/Cache's memory tier)", Stopwatch.median(cacheSet))])
        record(
            "memory tier get 1 KiB, MemoryStorage on its own (\(capacity) keys held, all hits)",
            unit: BenchResult.opsPerSecond, engine: Stopwatch.median(memoryGet),
            baselines: [("NSCache (hyperoslo/Cache's memory tier)", Stopwatch.median(cacheGet))])
    }
}
