import Foundation
import Testing

@testable import MediaStore

/// Point 7: per-entry metadata round-trips, through every write path and a reopen.
@Suite struct MetadataTests {
    static let metadata = EntryMetadata(
        mimeType: "audio/mpeg", etag: "\"v1-" + String(repeating: "e", count: 2_000) + "\"",
        lastModified: "Wed, 21 Oct 2015 07:28:00 GMT",
        userInfo: [
            "title": "Café del Mar 🎵", "empty": "", "bitrate": "320", "x-\(String(repeating: "k", count: 300))": "v",
        ])
    static let expiry = Date(timeIntervalSince1970: 4_000_000_000)
    static let options = WriteOptions(expiry: .at(expiry), metadata: metadata, cost: 12_345, pinned: true)

    func expectFields(_ info: EntryInfo?, length: Int, written: ClosedRange<Date>) {
        guard let info else {
            Issue.record("no entry")
            return
        }
        #expect(info.metadata == Self.metadata)
        #expect(info.cost == 12_345)
        #expect(info.isPinned)
        #expect(info.expiry == Self.expiry)
        #expect(!info.isExpired())
        #expect(info.length == length)
        #expect(info.isComplete)
        // Stored as seconds since 1970 in a Double: allow for rounding.
        let slack = written.lowerBound.addingTimeInterval(-0.001)...written.upperBound.addingTimeInterval(0.001)
        #expect(slack.contains(info.created), "created \(info.created) outside \(written)")
        #expect(slack.contains(info.lastAccess), "lastAccess \(info.lastAccess) outside \(written)")
    }

    @Test(arguments: ["put-inline", "put-chunked", "writer", "sparse"])
    func everyFieldRoundTripsThroughReopen(path: String) throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 71)
        let value = generator.bulkBytes(path == "put-inline" ? 100 : 300_000)
        let start = Date()
        switch path {
        case "writer":
            let writer = try t.store.makeWriter(forKey: "k", options: Self.options)
            try writer.append(value)
            try writer.finish()
        case "sparse":
            let version = try t.store.prepareEntry(forKey: "k", length: value.count, options: Self.options).version
            try t.store.write(value, at: 0, forKey: "k", version: version)
        default:
            try t.store.put(value, forKey: "k", options: Self.options)
        }
        let written = start...Date()
        expectFields(try t.store.info(forKey: "k"), length: value.count, written: written)
        try t.reopen()
        expectFields(try t.store.info(forKey: "k"), length: value.count, written: written)
        #expect(try t.store.entries().map(\.metadata) == [Self.metadata])
        #expect(try t.store.data(forKey: "k") == Data(value))
    }

    @Test func defaultsAreEmpty() throws {
        let t = try TestStore()
        let info = try t.store.put([1], forKey: "k")
        #expect(info.metadata == EntryMetadata())
        #expect(info.cost == 0)
        #expect(!info.isPinned)
        #expect(info.expiry == nil)
        #expect(info.contentDigest == ContentDigest(of: [UInt8]([1])))
    }

    /// A negative cost from a caller is stored as 0 (it trapped in the record encoder).
    @Test func aNegativeCostIsStoredAsZero() throws {
        let t = try TestStore()
        let info = try t.store.put([1, 2, 3], forKey: "k", options: WriteOptions(cost: -1))
        #expect(info.cost == 0)
        #expect(try t.store.info(forKey: "k")?.cost == 0)
    }

    @Test func settersChangeOneThingAndPersist() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 72)
        let value = generator.bulkBytes(50_000)
        try t.store.put(value, forKey: "k")
        let before = try #require(try t.store.info(forKey: "k"))

        let metadata = EntryMetadata(mimeType: "audio/flac", etag: "W/\"2\"", lastModified: nil, userInfo: ["a": "b"])
        try t.store.setMetadata(metadata, forKey: "k")
        try t.store.setPinned(true, forKey: "k")
        let expiry = Date(timeIntervalSince1970: 3_000_000_000)
        try t.store.setExpiry(.at(expiry), forKey: "k")
        try t.reopen()
        let after = try #require(try t.store.info(forKey: "k"))
        #expect(after.metadata == metadata)
        #expect(after.isPinned)
        #expect(after.expiry == expiry)
        #expect(after.created == before.created)
        #expect(after.contentDigest == before.contentDigest)
        #expect(after.cost == before.cost)
        #expect(try t.store.data(forKey: "k") == Data(value))

        try t.store.setPinned(false, forKey: "k")
        try t.store.setExpiry(.never, forKey: "k")
        #expect(try t.store.info(forKey: "k")?.isPinned == false)
        #expect(try t.store.info(forKey: "k")?.expiry == nil)

        #expect(throws: StoreError.notFound(key: "nope")) { try t.store.setMetadata(metadata, forKey: "nope") }
        #expect(throws: StoreError.notFound(key: "nope")) { try t.store.setPinned(true, forKey: "nope") }
        #expect(throws: StoreError.notFound(key: "nope")) { try t.store.setExpiry(.never, forKey: "nope") }
        #expect(try t.store.verify().isClean)
    }

    @Test func readsAdvanceLastAccessInBatches() throws {
        let t = try TestStore()
        try t.store.put([1, 2, 3], forKey: "k")
        let written = try #require(try t.store.info(forKey: "k")).lastAccess
        Thread.sleep(forTimeInterval: 0.01)
        let readAt = Date()
        _ = try t.store.data(forKey: "k")
        // Not yet written: reads do not write.
        #expect(try t.store.info(forKey: "k")?.lastAccess == written)
        try t.store.flushAccessTimes()
        let accessed = try #require(try t.store.info(forKey: "k")).lastAccess
        #expect(accessed > written)
        #expect(accessed >= readAt.addingTimeInterval(-0.001))
        #expect(try t.store.info(forKey: "k")?.created == written)
    }

    @Test func aFailedWriteKeepsTheReadsAccessTimesForTheNextOne() throws {
        let t = try TestStore()
        try t.store.put([1, 2, 3], forKey: "k")
        let written = try #require(try t.store.info(forKey: "k")).lastAccess
        Thread.sleep(forTimeInterval: 0.01)
        _ = try t.store.data(forKey: "k")
        // A write takes the pending times out, then fails in its body.
        #expect(throws: StoreError.notFound(key: "nope")) { try t.store.setPinned(true, forKey: "nope") }
        #expect(try t.store.info(forKey: "k")?.lastAccess == written)
        #expect(t.store.pendingAccess.withLock { $0.count } == 1)
        try t.store.flushAccessTimes()
        #expect(try #require(try t.store.info(forKey: "k")).lastAccess > written)
        #expect(t.store.pendingAccess.withLock { $0.isEmpty })
    }

    @Test func aReadAppliedAfterALaterWriteDoesNotMoveTheAccessBack() throws {
        let t = try TestStore()
        try t.store.put([1, 2, 3], forKey: "k")
        _ = try t.store.data(forKey: "k")  // pending, applied by the next write
        Thread.sleep(forTimeInterval: 0.01)
        let beforePin = Date()
        // The write touches the entry at its own, later time, then applies
        // the pending read: the entry's access must stay the write's.
        try t.store.setPinned(true, forKey: "k")
        let accessed = try #require(try t.store.info(forKey: "k")).lastAccess
        #expect(accessed >= beforePin.addingTimeInterval(-0.001))
        #expect(t.store.pendingAccess.withLock { $0.isEmpty })
    }

    @Test func manyReadsFlushTheirAccessTimesThemselves() throws {
        let t = try TestStore.inMemoryFileSystem(configuration: StoreConfiguration(initialMapSize: 64 << 20))
        let count = MediaStore.accessBatchSize
        try t.store.performBatch { batch in
            for index in 0..<count { try batch.put([UInt8(index & 0xFF)], forKey: "k\(index)") }
        }
        let written = try #require(try t.store.info(forKey: "k0")).lastAccess
        Thread.sleep(forTimeInterval: 0.01)
        for index in 0..<(count - 1) { _ = try t.store.data(forKey: "k\(index)") }
        #expect(try t.store.info(forKey: "k0")?.lastAccess == written)  // still batched
        _ = try t.store.data(forKey: "k\(count - 1)")
        t.store.waitForAccessFlush()
        #expect(try #require(try t.store.info(forKey: "k0")).lastAccess > written)
        #expect(t.store.pendingAccess.withLock { $0.isEmpty })
    }
}
