import Foundation
import Testing

@testable import MediaStore

/// Point 8: expired entries are misses; `removeExpired` walks the expiry index.
@Suite struct ExpiryTests {
    @Test func anExpiredEntryIsAMissButVisibleInInfo() throws {
        let t = try TestStore()
        var generator = SeededGenerator(seed: 81)
        let value = generator.bulkBytes(300_000)
        try t.store.put(value, forKey: "old", options: WriteOptions(expiry: .after(-1)))
        try t.store.put([1, 2], forKey: "small", options: WriteOptions(expiry: .at(Date(timeIntervalSince1970: 1))))
        for key in ["old", "small"] {
            #expect(try t.store.data(forKey: key) == nil)
            #expect(try !t.store.contains(key))
            let info = try #require(try t.store.info(forKey: key))
            #expect(info.isExpired())
            #expect(info.isComplete)
            #expect(throws: StoreError.notFound(key: key)) { try t.store.read(forKey: key, range: 0..<1) }
        }
        // Revalidation may still read it.
        #expect(try t.store.read(forKey: "old", range: 0..<100, includeExpired: true) == Data(value[0..<100]))
        #expect(try t.store.cachedRanges(forKey: "old") == [0..<value.count])
        #expect(try t.store.statistics().entryCount == 2)

        // Renewing it makes it a hit again.
        try t.store.setExpiry(.after(3_600), forKey: "old")
        #expect(try t.store.data(forKey: "old") == Data(value))
        #expect(try t.store.removeExpired() == 1)  // only "small"
    }

    @Test func removeExpiredRemovesExactlyTheExpired() throws {
        let t = try TestStore()
        var generator = SeededGenerator(seed: 82)
        let expired: [(String, ExpiryPolicy)] = [
            ("after-1", .after(-1)), ("past", .at(Date(timeIntervalSince1970: 1_000))),
            ("epoch", .at(Date(timeIntervalSince1970: 0))),
            ("before-epoch", .at(Date(timeIntervalSince1970: -5))), ("just-now", .after(0)),
        ]
        let alive: [(String, ExpiryPolicy)] = [
            ("hour", .after(3_600)), ("future", .at(Date(timeIntervalSince1970: 4e9))), ("never", .never),
            ("default", .default),
        ]
        for (index, (key, expiry)) in (expired + alive).enumerated() {
            let size = index.isMultiple(of: 2) ? 100 : 100_000 + index
            try t.store.put(generator.bulkBytes(size), forKey: key, options: WriteOptions(expiry: expiry))
        }
        // Pinned and in-use entries are not swept even when expired.
        try t.store.put(
            generator.bulkBytes(10), forKey: "pinned", options: WriteOptions(expiry: .after(-1), pinned: true))
        try t.store.put(generator.bulkBytes(10), forKey: "leased", options: WriteOptions(expiry: .after(-1)))
        var lease: EntryLease? = t.store.lease(forKey: "leased")
        #expect(lease?.key == "leased")

        #expect(try t.store.removeExpired() == expired.count)
        for (key, _) in expired { #expect(try t.store.info(forKey: key) == nil, "\(key)") }
        for (key, _) in alive { #expect(try t.store.data(forKey: key) != nil, "\(key)") }
        #expect(try t.store.info(forKey: "pinned") != nil)
        #expect(try t.store.info(forKey: "leased") != nil)
        #expect(try t.store.removeExpired() == 0)

        lease = nil
        #expect(try t.store.removeExpired() == 1)
        #expect(try t.store.info(forKey: "leased") == nil)
        try t.store.setPinned(false, forKey: "pinned")
        #expect(try t.store.removeExpired() == 1)
        #expect(try t.store.statistics().entryCount == alive.count)
        #expect(try expiryRows(t.store) == 2)  // "hour" and "future"
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func changingTheExpiryMovesItInTheIndex() throws {
        let t = try TestStore()
        try t.store.put([1], forKey: "k", options: WriteOptions(expiry: .after(-1)))
        try t.store.setExpiry(.after(3_600), forKey: "k")
        #expect(try t.store.removeExpired() == 0)
        #expect(try expiryRows(t.store) == 1)
        try t.store.setExpiry(.never, forKey: "k")
        #expect(try expiryRows(t.store) == 0)
        try t.store.setExpiry(.at(Date(timeIntervalSince1970: 10)), forKey: "k")
        try t.store.put([2], forKey: "k", options: WriteOptions(expiry: .after(-1)))  // replace
        #expect(try expiryRows(t.store) == 1)
        #expect(try t.store.removeExpired() == 1)
        #expect(try expiryRows(t.store) == 0)
    }

    @Test func theDefaultLifetimeApplies() throws {
        let t = try TestStore(configuration: StoreConfiguration(defaultLifetime: 100, initialMapSize: 64 << 20))
        let before = Date()
        let put = try t.store.put([1], forKey: "put")
        let writer = try t.store.makeWriter(forKey: "writer")
        try writer.append([UInt8](repeating: 9, count: 10_000))
        let streamed = try writer.finish()
        let sparse = try t.store.prepareEntry(forKey: "sparse", length: 10)
        let never = try t.store.put([1], forKey: "never", options: WriteOptions(expiry: .never))
        let after = Date()
        for info in [put, streamed, sparse] {
            let expiry = try #require(info.expiry, "\(info.key)")
            #expect(
                expiry >= before.addingTimeInterval(99.999) && expiry <= after.addingTimeInterval(100.001),
                "\(info.key)")
        }
        #expect(never.expiry == nil)
        // What the writes returned is what was stored.
        for info in [put, streamed, sparse, never] {
            #expect(try t.store.info(forKey: info.key) == info, "\(info.key)")
        }
        try t.store.setExpiry(.default, forKey: "never")
        #expect(try t.store.info(forKey: "never")?.expiry != nil)
        #expect(try t.store.removeExpired() == 0)
    }

    @Test func aNegativeDefaultLifetimeExpiresAtOnce() throws {
        let t = try TestStore(configuration: StoreConfiguration(defaultLifetime: -1, initialMapSize: 64 << 20))
        try t.store.put([1, 2, 3], forKey: "a")
        try t.store.put([1, 2, 3], forKey: "kept", options: WriteOptions(expiry: .never))
        #expect(try t.store.data(forKey: "a") == nil)
        #expect(try t.store.data(forKey: "kept") == Data([1, 2, 3]))
        #expect(try t.store.removeExpired() == 1)
        #expect(try t.store.statistics().entryCount == 1)
    }

    @Test func preparingAnExpiredEntryStartsAFreshOne() throws {
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: 8_192, initialMapSize: 64 << 20))
        let version = try t.store.prepareEntry(
            forKey: "k", length: 20_000, options: WriteOptions(expiry: .after(-1))
        ).version
        try t.store.write([UInt8](repeating: 1, count: 8_192), at: 0, forKey: "k", version: version)
        let fresh = try t.store.prepareEntry(forKey: "k", length: 20_000, options: WriteOptions(expiry: .never))
        #expect(fresh.cachedBytes == 0)
        #expect(fresh.expiry == nil)
        #expect(try t.store.cachedRanges(forKey: "k") == [])
        #expect(try t.store.statistics().chunkCount == 0)
        #expect(try t.store.verify().isClean)
    }
}

/// Rows in the expiry index.
func expiryRows(_ store: MediaStore) throws -> Int {
    try withReadTransaction(store) { try $0.txn.count($0.db.expiry) }
}
