import Foundation
import MediaStore

extension BenchmarkRunner {
    /// An encrypted store beside a plain one, on the same values in the
    /// same run (the plain store is the baseline): a streamed write of
    /// each large value in 64 KiB appends, gets of whole values in a
    /// random order (warm: the plain store skips hashing chunks it
    /// verified before, the encrypted one opens every block on every
    /// read), 64 KiB range reads at random offsets, and a cached track
    /// served through `MediaServer` (``runEncryptedServer()``).
    func runEncrypted() throws {
        let w = workloads
        let size = Workloads.describe(bytes: w.largeSize)
        log("encrypted: \(size) values ×\(w.largeCount) in a plain and an encrypted store")
        let keys = w.largeKeys()
        let values = w.largeValues()
        let totalBytes = w.largeCount * w.largeSize
        let plainDirectory = try freshDirectory("plain-store")
        let encryptedDirectory = try freshDirectory("encrypted-store")
        defer {
            remove(plainDirectory)
            remove(encryptedDirectory)
        }
        var configuration = StoreConfiguration()
        configuration.encryption = StoreConfiguration.Encryption(key: StoreKey.random())
        let plain = try MediaStore(directory: plainDirectory)
        let encrypted = try MediaStore(directory: encryptedDirectory, configuration: configuration)
        let stores = [plain, encrypted]

        let append = 64 << 10
        var writes: [[Double]] = [[], []]
        for repetition in 0..<w.repetitions {
            let order = Workloads.order(count: w.largeCount, pass: repetition + 300)
            for (position, store) in stores.enumerated() {
                try store.removeAll()
                writes[position].append(
                    Self.megabytesPerSecond(
                        totalBytes,
                        try Stopwatch.time {
                            for index in order {
                                let writer = try store.makeWriter(forKey: keys[index])
                                let value = values[index]
                                var offset = 0
                                while offset < value.count {
                                    let end = min(offset + append, value.count)
                                    try writer.append(value[offset..<end])
                                    offset = end
                                }
                                _ = try writer.finish()
                            }
                        }))
            }
        }
        record(
            "encrypted store: streamed write \(size) (64 KiB appends, \(w.largeCount) values)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(writes[1]),
            baselines: [("plain store", Stopwatch.median(writes[0]))])

        var gets: [[Double]] = [[], []]
        for pass in 0..<w.getPasses {
            let order = Workloads.order(count: w.largeCount, pass: pass + 400)
            for (position, store) in stores.enumerated() {
                var bytes = 0
                gets[position].append(
                    Self.megabytesPerSecond(
                        totalBytes,
                        try Stopwatch.time {
                            for index in order { bytes += try store.data(forKey: keys[index])?.count ?? 0 }
                        }))
                verify(bytes == totalBytes, "encrypted get \(size): \(bytes) bytes read, expected \(totalBytes)")
            }
        }
        record(
            "encrypted store: get \(size) (\(w.largeCount) values, random order, median of \(w.getPasses) passes)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(gets[1]),
            baselines: [("plain store", Stopwatch.median(gets[0]))])

        let rangeBytes = 64 << 10
        let reads = options.quick ? 300 : 3_000
        var generator = SplitMix64(seed: 0x5EA1_0029)
        let places = (0..<reads).map { _ in
            (Int(generator.next() % UInt64(w.largeCount)), Int(generator.next() % UInt64(w.largeSize - rangeBytes)))
        }
        var ranges: [[Double]] = [[], []]
        for _ in 0..<w.repetitions {
            for (position, store) in stores.enumerated() {
                var bytes = 0
                ranges[position].append(
                    Self.megabytesPerSecond(
                        reads * rangeBytes,
                        try Stopwatch.time {
                            for (index, offset) in places {
                                bytes += try store.read(forKey: keys[index], range: offset..<offset + rangeBytes).count
                            }
                        }))
                verify(bytes == reads * rangeBytes, "encrypted range reads: \(bytes) bytes read")
            }
        }
        let (index, offset) = places[0]
        verify(
            try encrypted.read(forKey: keys[index], range: offset..<offset + rangeBytes)
                == Data(values[index][offset..<offset + rangeBytes]),
            "encrypted range read returned other bytes")
        record(
            "encrypted store: 64 KiB range read at random offsets (\(reads) reads)",
            unit: BenchResult.megabytesPerSecond, engine: Stopwatch.median(ranges[1]),
            baselines: [("plain store", Stopwatch.median(ranges[0]))])
        plain.close()
        encrypted.close()
        try runEncryptedServer()
    }
}
