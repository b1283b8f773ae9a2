import Foundation
import MediaSupport
import Testing

@testable import MediaStore

@Suite struct RemovalHandlerTests {
    @Test func evictionsAndExpiryAreReportedWithTheirReason() throws {
        let t = try TestStore(configuration: StoreConfiguration(countLimit: 3, initialMapSize: 16 << 20))
        let removals = Locked<[StoreRemoval]>([])
        let observation = t.store.addRemovalObserver { batch in removals.withLock { $0.append(contentsOf: batch) } }
        defer { observation.cancel() }
        try t.store.put([1], forKey: "old", options: WriteOptions(expiry: .after(-1)))
        for key in ["a", "b", "c"] { try t.store.put([2], forKey: key) }
        // Four entries over a limit of three: down to 90% (2), oldest first.
        #expect(
            removals.withLock { $0 } == [
                StoreRemoval(key: "old", reason: .evicted), StoreRemoval(key: "a", reason: .evicted),
            ])
        try t.store.put([3], forKey: "soon", options: WriteOptions(expiry: .after(-1)))
        removals.withLock { $0 = [] }
        #expect(try t.store.removeExpired() == 1)
        #expect(removals.withLock { $0 } == [StoreRemoval(key: "soon", reason: .expired)])
        // Explicit removals are the caller's own doing: not reported.
        removals.withLock { $0 = [] }
        try t.store.remove(forKey: "b")
        #expect(removals.withLock { $0 }.isEmpty)
    }

    @Test func logicalAccountingCountsEveryEntryInFull() throws {
        var generator = SplitMix64(seed: 9)
        let value = generator.bytes(300_000)
        let configuration = StoreConfiguration(
            sizeLimit: 1_000_000, sizeAccounting: .logical, initialMapSize: 16 << 20)
        let t = try TestStore(configuration: configuration)
        // Identical content dedups to ~300 KB stored, but counts 300 KB per key.
        for index in 0..<4 { try t.store.put(value, forKey: "k\(index)") }
        let stats = try t.store.statistics()
        #expect(stats.logicalBytes <= 900_000)
        #expect(stats.entryCount == 3)
        #expect(try t.store.info(forKey: "k0") == nil)
    }

    @Test func entryReturnsInfoAndBytesTogetherAndCanIncludeExpired() throws {
        let t = try TestStore()
        try t.store.put(Array("abc".utf8), forKey: "k", options: WriteOptions(expiry: .after(-5), cost: 7))
        #expect(try t.store.entry(forKey: "k") == nil)
        let found = try #require(try t.store.entry(forKey: "k", includeExpired: true))
        #expect(found.data == Data("abc".utf8))
        #expect(found.info.cost == 7)
        #expect(found.info.isExpired())
    }
}

@Suite struct WriteBatchTests {
    struct Refused: Error, Equatable {}

    @Test func aBatchIsAllOrNothingAndRethrowsTheBodysOwnError() throws {
        let t = try TestStore()
        try t.store.put([1], forKey: "kept")
        #expect(throws: Refused()) {
            try t.store.performBatch { batch in
                try batch.put([2], forKey: "new")
                try batch.remove(forKey: "kept")
                throw Refused()
            }
        }
        #expect(try t.store.data(forKey: "kept") == Data([1]))
        #expect(try t.store.info(forKey: "new") == nil)
        try t.store.performBatch { batch in
            for index in 0..<50 { try batch.put([UInt8(index)], forKey: "k\(index)") }
        }
        #expect(try t.store.statistics().entryCount == 51)
        #expect(try t.store.verify().isClean)
    }
}

@Suite struct ValueReadTests {
    @Test func valueReturnsTheBytesAndTheExpiry() throws {
        let t = try TestStore()
        let expiry = Date(timeIntervalSince1970: 4_000_000_000)
        try t.store.put(Array("abc".utf8), forKey: "k", options: WriteOptions(expiry: .at(expiry)))
        let found = try #require(try t.store.value(forKey: "k"))
        #expect(found.data == Data("abc".utf8))
        #expect(abs((found.expiry?.timeIntervalSince1970 ?? 0) - expiry.timeIntervalSince1970) < 0.001)
        try t.store.put(Array("old".utf8), forKey: "gone", options: WriteOptions(expiry: .after(-1)))
        #expect(try t.store.value(forKey: "gone") == nil)
        #expect(try t.store.value(forKey: "gone", includeExpired: true)?.data == Data("old".utf8))
        #expect(try t.store.value(forKey: "missing") == nil)
    }
}
