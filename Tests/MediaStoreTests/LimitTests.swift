import Foundation
import Testing

@testable import MediaStore

/// Point 9: size and count limits, LRU eviction to ~90%, pinned and in-use
/// entries kept, oversized entries refused.
@Suite struct LimitTests {
    static let limit = 100_000
    /// One raw chunk each: 20,000 + 12 stored bytes.
    static let valueSize = 20_000
    static let sized = StoreConfiguration(sizeLimit: limit, initialMapSize: 64 << 20)

    static func present(_ store: MediaStore, _ keys: [String]) throws -> [String] {
        try keys.filter { try store.info(forKey: $0) != nil }
    }

    @Test func leastRecentlyUsedEntriesAreEvictedBySize() throws {
        let t = try TestStore(configuration: Self.sized)
        var generator = SeededGenerator(seed: 91)
        let keys = (0..<8).map { "a\($0)" }
        var values: [String: [UInt8]] = [:]
        func put(_ key: String) throws {
            values[key] = generator.bulkBytes(Self.valueSize)
            try t.store.put(values[key]!, forKey: key)
            #expect(try t.store.statistics().storedBytes <= Self.limit)
        }
        for key in keys[0..<4] { try put(key) }
        #expect(try t.store.statistics().evictions == 0)

        // A whole read counts as a use (applied with the next write).
        _ = try t.store.data(forKey: "a0")
        try put("a4")
        #expect(try Self.present(t.store, keys) == ["a0", "a2", "a3", "a4"])
        #expect(try t.store.statistics().storedBytes <= Int(Double(Self.limit) * 0.9))

        // So does a range read, flushed explicitly.
        _ = try t.store.read(forKey: "a2", range: 0..<10)
        try t.store.flushAccessTimes()
        try put("a5")
        #expect(try Self.present(t.store, keys) == ["a0", "a2", "a4", "a5"])

        // Reads survive a reopen in LRU order.
        _ = try t.store.data(forKey: "a4")
        try t.reopen()
        try put("a6")
        #expect(try Self.present(t.store, keys) == ["a2", "a4", "a5", "a6"])

        for key in try Self.present(t.store, keys) {
            #expect(try t.store.data(forKey: key) == Data(values[key]!))
        }
        let stats = try t.store.statistics()
        #expect(stats.evictions == 3)
        #expect(stats.entryCount == 4)
        #expect(try t.store.verify().isClean)
    }

    @Test func leastRecentlyUsedEntriesAreEvictedByCount() throws {
        let t = try TestStore(configuration: StoreConfiguration(countLimit: 10, initialMapSize: 64 << 20))
        let keys = (0..<12).map { "k\($0)" }
        for (index, key) in keys[0..<10].enumerated() {
            try t.store.put([UInt8(index)], forKey: key)
        }
        #expect(try t.store.statistics().entryCount == 10)
        _ = try t.store.data(forKey: "k0")
        try t.store.put([10], forKey: "k10")
        // Over the limit: down to 90%, oldest first.
        #expect(try t.store.statistics().entryCount == 9)
        #expect(try Self.present(t.store, keys) == ["k0", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10"])
        // Partial entries count too.
        try t.store.prepareEntry(forKey: "k11", length: 100_000)
        #expect(try t.store.statistics().entryCount == 10)
        #expect(try t.store.verify().isClean)
    }

    @Test func pinnedEntriesAreNeverEvicted() throws {
        let t = try TestStore(configuration: Self.sized)
        var generator = SeededGenerator(seed: 92)
        let pinned = generator.bulkBytes(Self.valueSize)
        try t.store.put(pinned, forKey: "pinned", options: WriteOptions(pinned: true))
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "pinned-later")
        try t.store.setPinned(true, forKey: "pinned-later")
        for index in 0..<10 {
            try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "v\(index)")
            #expect(try t.store.statistics().storedBytes <= Self.limit)
        }
        #expect(try t.store.data(forKey: "pinned") == Data(pinned))
        #expect(try t.store.info(forKey: "pinned-later") != nil)
        #expect(try t.store.evict(toBytes: 0) == 2)  // everything but the pinned
        #expect(try t.store.statistics().entryCount == 2)

        // Unpinned, it is the next to go.
        try t.store.setPinned(false, forKey: "pinned")
        #expect(try t.store.evict(toBytes: 0) == 1)
        #expect(try t.store.info(forKey: "pinned") == nil)
        #expect(try t.store.verify().isClean)
    }

    @Test func leasedAndBeingWrittenEntriesAreNotEvicted() throws {
        let t = try TestStore(configuration: Self.sized)
        var generator = SeededGenerator(seed: 93)
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "leased")
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "streaming")
        var lease: EntryLease? = t.store.lease(forKey: "leased")
        let writer = try t.store.makeWriter(forKey: "streaming")
        try writer.append([1, 2, 3])
        for index in 0..<8 {
            try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "v\(index)")
        }
        #expect(try t.store.info(forKey: "leased") != nil)
        #expect(try t.store.info(forKey: "streaming") != nil)
        #expect(try t.store.statistics().storedBytes <= Self.limit)

        writer.cancel()
        lease = nil
        #expect(lease == nil)
        // Both are the least recently used and go first now.
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "v8")
        #expect(try t.store.info(forKey: "leased") == nil)
        #expect(try t.store.info(forKey: "streaming") != nil)
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "v9")
        #expect(try t.store.info(forKey: "streaming") == nil)
        #expect(try t.store.verify().isClean)
    }

    @Test func anEntryLargerThanTheLimitIsRefused() throws {
        let t = try TestStore(configuration: Self.sized)
        var generator = SeededGenerator(seed: 94)
        let kept = generator.bulkBytes(Self.valueSize)
        try t.store.put(kept, forKey: "kept")
        let before = try t.store.statistics()
        let big = generator.bulkBytes(Self.limit + 1)
        #expect(throws: StoreError.entryTooLarge(key: "big", size: Self.limit + 1, limit: Self.limit)) {
            try t.store.put(big, forKey: "big")
        }
        #expect(throws: StoreError.entryTooLarge(key: "big", size: 200_000, limit: Self.limit)) {
            try t.store.makeWriter(forKey: "big", expectedLength: 200_000)
        }
        #expect(throws: StoreError.entryTooLarge(key: "big", size: 200_000, limit: Self.limit)) {
            try t.store.prepareEntry(forKey: "big", length: 200_000).version
        }
        // A stream of unknown length is refused once it outgrows the limit.
        let writer = try t.store.makeWriter(forKey: "kept")
        try writer.append(big[..<60_000])
        #expect(throws: StoreError.entryTooLarge(key: "kept", size: Self.limit + 1, limit: Self.limit)) {
            try writer.append(big[60_000...])
        }
        #expect(throws: StoreError.writerClosed) { try writer.finish() }

        let after = try t.store.statistics()
        #expect(after.entryCount == before.entryCount)
        #expect(after.storedBytes == before.storedBytes)
        #expect(after.chunkCount == before.chunkCount)
        #expect(after.evictions == 0)
        #expect(try t.store.info(forKey: "big") == nil)
        #expect(try t.store.data(forKey: "kept") == Data(kept))
        #expect(try t.store.verify().isClean)
    }

    /// A value that fits the limit but not the 90% low-water mark evicts
    /// everything else, never itself.
    @Test(arguments: ["put", "writer", "sparse"])
    func aLargeButFittingEntryDoesNotEvictItself(path: String) throws {
        let t = try TestStore(
            configuration: StoreConfiguration(sizeLimit: Self.limit, chunkSize: 16_384, initialMapSize: 64 << 20))
        var generator = SeededGenerator(seed: 95)
        try t.store.put(generator.bulkBytes(Self.valueSize), forKey: "old")
        let value = generator.bulkBytes(95_000)
        switch path {
        case "put":
            try t.store.put(value, forKey: "k")
        case "writer":
            let writer = try t.store.makeWriter(forKey: "k")
            try writer.append(value)
            try writer.finish()
        default:
            let version = try t.store.prepareEntry(forKey: "k", length: value.count).version
            try t.store.write(value, at: 0, forKey: "k", version: version)
        }
        #expect(try t.store.data(forKey: "k") == Data(value))
        #expect(try t.store.info(forKey: "old") == nil)
        #expect(try t.store.verify().isClean)
    }

    @Test func aCountLimitOfOneKeepsTheNewest() throws {
        let t = try TestStore(configuration: StoreConfiguration(countLimit: 1, initialMapSize: 64 << 20))
        try t.store.put([1], forKey: "a")
        try t.store.put([2], forKey: "b")
        #expect(try t.store.data(forKey: "b") == Data([2]))
        #expect(try t.store.info(forKey: "a") == nil)
        #expect(try t.store.statistics().entryCount == 1)
    }
}
