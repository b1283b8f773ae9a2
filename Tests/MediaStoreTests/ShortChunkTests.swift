import Foundation
import Testing

@testable import MediaStore

/// Short chunks that are not an entry's last: a write of known length may
/// end mid-chunk (a preload's prefix, a transfer a player left), and a
/// later write continues that chunk or replaces it with a longer one.
@Suite struct ShortChunkTests {
    static let chunk = 16_384
    static let configuration = StoreConfiguration(chunkSize: chunk, initialMapSize: 64 << 20)

    @Test func aWriteMayEndMidChunkAndIsReadBack() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 7)
        let length = 3 * c + 100
        let value = generator.bulkBytes(length)
        let version = try t.store.prepareEntry(forKey: "k", length: length).version
        let info = try t.store.write(value[0..<(c + 1000)], at: 0, forKey: "k", version: version)
        #expect(info.cachedBytes == c + 1000 && !info.isComplete)
        #expect(try t.store.cachedRanges(forKey: "k") == [0..<(c + 1000)])
        #expect(try t.store.read(forKey: "k", range: c..<(c + 1000)) == Data(value[c..<(c + 1000)]))
        #expect(throws: StoreError.self) { try t.store.read(forKey: "k", range: c..<(c + 1001)) }
        #expect(try t.store.statistics().logicalBytes == c + 1000)
        #expect(try t.store.verify().isClean)
    }

    @Test func aWriteAtAShortChunksEndContinuesItToCompletion() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 8)
        let length = 2 * c + 7
        let value = generator.bulkBytes(length)
        let version = try t.store.prepareEntry(forKey: "k", length: length).version
        try t.store.write(value[0..<300], at: 0, forKey: "k", version: version)
        try t.store.write(value[300..<(c + 5)], at: 300, forKey: "k", version: version)
        #expect(try t.store.cachedRanges(forKey: "k") == [0..<(c + 5)])
        // Past the short chunk's end: refused, nothing changes.
        #expect(throws: StoreError.misalignedWrite(key: "k", offset: c + 6, count: 10, chunkSize: c)) {
            try t.store.write(value[(c + 6)..<(c + 16)], at: c + 6, forKey: "k", version: version)
        }
        #expect(try t.store.cachedRanges(forKey: "k") == [0..<(c + 5)])
        // Overlapping its end: the bytes it has are kept, the rest appended.
        let done = try t.store.write(value[(c + 4)...], at: c + 4, forKey: "k", version: version)
        #expect(done.isComplete && done.cachedBytes == length && done.chunkCount == 3)
        #expect(done.contentDigest == ContentDigest(of: value))
        #expect(try t.store.data(forKey: "k") == Data(value))
        let statistics = try t.store.statistics()
        // The short chunks given way were released.
        #expect(statistics.chunkCount == 3 && statistics.logicalBytes == length)
        #expect(try t.store.verify().isClean)
    }

    @Test func aWholeChunkReplacesAShortOneAndAShorterWriteKeepsIt() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 9)
        let value = generator.bulkBytes(2 * c)
        let version = try t.store.prepareEntry(forKey: "k", length: 2 * c).version
        try t.store.write(value[0..<500], at: 0, forKey: "k", version: version)
        // Shorter than what is there: kept as it is.
        #expect(try t.store.write(value[0..<100], at: 0, forKey: "k", version: version).cachedBytes == 500)
        try t.store.write(value[c..<(2 * c)], at: c, forKey: "k", version: version)
        #expect(try t.store.cachedRanges(forKey: "k") == [0..<500, c..<(2 * c)])
        let done = try t.store.write(value[0..<c], at: 0, forKey: "k", version: version)
        #expect(done.isComplete && done.contentDigest == ContentDigest(of: value))
        #expect(try t.store.statistics().chunkCount == 2)
        #expect(try t.store.verify().isClean)
    }

    @Test func aShortChunkIsBoundToItsVersion() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let old = try t.store.prepareEntry(forKey: "k", length: 2 * c).version
        try t.store.write([UInt8](repeating: 1, count: 200), at: 0, forKey: "k", version: old)
        try t.store.remove(forKey: "k")
        let new = try t.store.prepareEntry(forKey: "k", length: 2 * c).version
        #expect(throws: StoreError.entryReplaced(key: "k", expected: old, found: new)) {
            try t.store.write([UInt8](repeating: 1, count: 100), at: 200, forKey: "k", version: old)
        }
        // The new version has no short chunk to continue.
        #expect(throws: StoreError.misalignedWrite(key: "k", offset: 200, count: 100, chunkSize: c)) {
            try t.store.write([UInt8](repeating: 2, count: 100), at: 200, forKey: "k", version: new)
        }
        #expect(try t.store.cachedRanges(forKey: "k") == [])
    }

    @Test func aDamagedShortChunkIsNotContinued() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let version = try t.store.prepareEntry(forKey: "k", length: 2 * c).version
        try t.store.write([UInt8](repeating: 1, count: 200), at: 0, forKey: "k", version: version)
        // A byte of the stored short chunk flipped behind the store's back.
        let slot = try #require(try chunkSlots(t.store, key: "k").first)
        try withWriteTransaction(t.store) { transaction in
            var value = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            value[value.count - 1] ^= 0x5A
            try transaction.txn.put(transaction.db.chunks, key: slot, value: value)
        }
        try t.reopen()
        let error = #expect(throws: StoreError.self) {
            try t.store.write([UInt8](repeating: 1, count: 100), at: 200, forKey: "k", version: version)
        }
        guard case .corrupted = error else {
            Issue.record("expected .corrupted, got \(String(describing: error))")
            return
        }
    }
}
