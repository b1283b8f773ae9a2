import Foundation
import Testing

@testable import MediaStore

/// Seeded random operation sequences applied to the store and to an
/// in-memory model; every observation must agree. The seed is printed
/// with every failure; rerun one with `MEDIASTORE_MODEL_SEED=<seed>`.
@Suite struct ModelBasedTests {
    /// What the model knows of one key.
    struct ModelEntry {
        var bytes: [UInt8]  // the full content (for partial entries: what will be filled)
        var present: [Int: Int]  // chunk index → bytes it holds from its start (partial entries; short ones too)
        var complete: Bool
        var expired: Bool
        var pinned: Bool
        var version: UInt64? = nil  // the version prepareEntry returned (partial entries)
    }

    static let chunkSize = 512
    static let configuration = StoreConfiguration(
        compressionLevel: 1, chunkSize: chunkSize, inlineLimit: 100, initialMapSize: 8 << 20)

    static var seeds: [UInt64] {
        if let text = ProcessInfo.processInfo.environment["MEDIASTORE_MODEL_SEED"], let seed = UInt64(text) {
            return [seed]
        }
        return [1, 2, 3, 4]
    }

    /// Each seed on a plain store and on an encrypted one.
    @Test(arguments: seeds, [false, true])
    func randomOperationsAgreeWithTheModel(seed: UInt64, encrypted: Bool) throws {
        var configuration = Self.configuration
        if encrypted {
            configuration.encryption = StoreConfiguration.Encryption(key: try StoreKey(bytes: Array(0..<32)))
        }
        let t = try TestStore.inMemoryFileSystem(configuration: configuration)
        var random = SplitMix64(seed: seed)
        var model: [String: ModelEntry] = [:]
        let keys = (0..<24).map { "https://example.com/track/\($0)?token=\($0 % 3)" }
        // A few shared contents so that chunks are deduplicated across keys.
        let shared = (0..<4).map { _ in random.bytes(Int(random.next() % 3000) + 1) }
        func content() -> [UInt8] {
            switch random.next() % 4 {
            case 0: return shared[Int(random.next() % 4)]
            case 1: return [UInt8](repeating: UInt8(random.next() % 256), count: Int(random.next() % 2500))
            default: return random.bytes(Int(random.next() % 3500))
            }
        }
        let operations = 2_600
        for step in 0..<operations {
            let key = keys[Int(random.next() % UInt64(keys.count))]
            let context = "seed \(seed)\(encrypted ? " (encrypted)" : ""), step \(step), key \(key)"
            switch random.next() % 100 {
            case 0..<22:
                let value = content()
                let pinned = random.next() % 10 == 0
                let expired = random.next() % 12 == 0
                try t.store.put(
                    value, forKey: key, options: WriteOptions(expiry: expired ? .after(-10) : .never, pinned: pinned))
                model[key] = ModelEntry(bytes: value, present: [:], complete: true, expired: expired, pinned: pinned)
            case 22..<30:
                let value = content()
                let writer = try t.store.makeWriter(forKey: key)
                var offset = 0
                while offset < value.count {
                    let take = min(value.count - offset, Int(random.next() % 700) + 1)
                    try writer.append(Array(value[offset..<offset + take]))
                    offset += take
                }
                if random.next() % 5 == 0 {
                    writer.cancel()
                } else {
                    try writer.finish()
                    model[key] = ModelEntry(bytes: value, present: [:], complete: true, expired: false, pinned: false)
                }
            case 30..<40:
                // prepareEntry keeps an existing entry of the same length, so
                // the model only prepares keys that have none.
                guard model[key] == nil else { break }
                let value = content()
                let version = try t.store.prepareEntry(forKey: key, length: value.count).version
                model[key] = ModelEntry(
                    bytes: value, present: [:], complete: value.isEmpty, expired: false, pinned: false, version: version
                )
            case 40..<55:
                guard var entry = model[key], !entry.complete, !entry.expired else { break }
                let c = Self.chunkSize
                let chunks = (entry.bytes.count + c - 1) / c
                let first = Int(random.next() % UInt64(chunks))
                let last = min(chunks, first + Int(random.next() % 3) + 1)
                // From the chunk's start or within the bytes it holds (continuing
                // a short chunk); to a chunk boundary, or inside the last chunk.
                let start = first * c + Int(random.next() % UInt64((entry.present[first] ?? 0) + 1))
                var end = min(entry.bytes.count, last * c)
                guard start < end else { break }
                if random.next() % 3 == 0 { end = max(start + 1, end - Int(random.next() % UInt64(c))) }
                let version = try #require(entry.version, "a partial entry of the model has a version \(context)")
                try t.store.write(Array(entry.bytes[start..<end]), at: start, forKey: key, version: version)
                for index in first..<last where end > index * c {
                    let held = min(end, (index + 1) * c, entry.bytes.count) - index * c
                    entry.present[index] = max(entry.present[index] ?? 0, held)
                }
                entry.complete = (0..<chunks).allSatisfy {
                    entry.present[$0] == min(c, entry.bytes.count - $0 * c)
                }
                model[key] = entry
            case 55..<75:
                let expected = model[key].flatMap { $0.complete && !$0.expired ? Data($0.bytes) : nil }
                #expect(try t.store.data(forKey: key) == expected, "data(forKey:) \(context)")
            case 75..<82:
                guard let entry = model[key], !entry.expired, !entry.bytes.isEmpty else { break }
                let a = Int(random.next() % UInt64(entry.bytes.count))
                let b = min(entry.bytes.count, a + Int(random.next() % 1500) + 1)
                let cached = ((a / Self.chunkSize)...((b - 1) / Self.chunkSize)).allSatisfy { index in
                    (entry.present[index] ?? 0) >= min(b, (index + 1) * Self.chunkSize) - index * Self.chunkSize
                }
                if entry.complete || cached {
                    #expect(try t.store.read(forKey: key, range: a..<b) == Data(entry.bytes[a..<b]), "read \(context)")
                } else {
                    #expect(throws: StoreError.self, "read of a hole \(context)") {
                        try t.store.read(forKey: key, range: a..<b)
                    }
                }
            case 82..<88:
                #expect(try t.store.remove(forKey: key) == (model[key] != nil), "remove \(context)")
                model[key] = nil
            case 88..<91:
                let removed = try t.store.removeExpired()
                let expected = model.filter { $0.value.expired && !$0.value.pinned }
                #expect(removed == expected.count, "removeExpired \(context)")
                for key in expected.keys { model[key] = nil }
            case 91..<94:
                let stats = try t.store.statistics()
                try t.store.evict(toBytes: stats.storedBytes / 2)
                for (key, entry) in model where try t.store.info(forKey: key) == nil {
                    #expect(!entry.pinned, "a pinned entry was evicted \(context)")
                    model[key] = nil
                }
            case 94..<96:
                try t.reopen()
            default:
                try checkEverything(t.store, model: model, context: context)
            }
        }
        try checkEverything(t.store, model: model, context: "seed \(seed), end")
        let report = try t.store.verify()
        #expect(report.isClean, "seed \(seed): \(report.problems)")
    }

    func checkEverything(_ store: MediaStore, model: [String: ModelEntry], context: String) throws {
        let stats = try store.statistics()
        #expect(stats.entryCount == model.count, "entry count \(context)")
        for (key, entry) in model {
            let info = try store.info(forKey: key)
            #expect(info?.isComplete == entry.complete, "completeness of \(key) \(context)")
            #expect(info?.isPinned == entry.pinned, "pin of \(key) \(context)")
            if entry.complete {
                #expect(info?.contentDigest == ContentDigest(of: entry.bytes), "digest of \(key) \(context)")
            } else {
                let expected = entry.present.sorted { $0.key < $1.key }.map { index, held in
                    (index * Self.chunkSize)..<(index * Self.chunkSize + held)
                }
                let merged = expected.reduce(into: [Range<Int>]()) { ranges, range in
                    if let last = ranges.last, last.upperBound == range.lowerBound {
                        ranges[ranges.count - 1] = last.lowerBound..<range.upperBound
                    } else {
                        ranges.append(range)
                    }
                }
                #expect(try store.cachedRanges(forKey: key) == merged, "ranges of \(key) \(context)")
            }
        }
    }
}
