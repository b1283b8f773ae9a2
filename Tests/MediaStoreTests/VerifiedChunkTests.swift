import Foundation
import Testing

@testable import MediaStore

/// MediaStore.docc/StoreFormat.md, "Integrity on reads": what a store instance trusts after it
/// verified a chunk, and for how long. A byte flipped in the file after a
/// chunk's first verified read is served by that store instance while it
/// remembers the chunk; `verify()`, a new store instance and a store that
/// remembers nothing (`verifiedChunkMemory: 0`) catch it.
@Suite struct VerifiedChunkTests {
    let directory = temporaryPath("verified-chunks")

    func open(memory: Int = 16_384) throws -> MediaStore {
        var configuration = StoreConfiguration(chunkSize: 65_536, initialMapSize: 64 << 20)
        configuration.verifiedChunkMemory = memory
        return try MediaStore(directory: directory, configuration: configuration)
    }

    /// Flips one byte (at `pattern`'s offset 17) of the one copy of
    /// `pattern` in `data.mdb`, in place, with the store still open.
    func flipInPlace(pattern: [UInt8]) throws {
        let file = directory.appendingPathComponent("data.mdb")
        let bytes = try Data(contentsOf: file)
        let found = try #require(bytes.range(of: Data(pattern)))
        #expect(bytes.range(of: Data(pattern), in: found.upperBound..<bytes.endIndex) == nil)
        let offset = found.lowerBound - bytes.startIndex + 17
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [bytes[found.lowerBound + 17] ^ 0x5A])
        try handle.synchronize()
    }

    func expectCorrupted(_ body: () throws -> Void) {
        let error = #expect(throws: StoreError.self) { try body() }
        guard case .corrupted(let key, _) = error else {
            Issue.record("expected .corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == "k")
    }

    @Test func aByteFlippedAfterAVerifiedReadIsServedByThatStoreUntilItCloses() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 121)
        let value = generator.bulkBytes(3 * 65_536)  // random: stored raw, verbatim in the file
        var store = try open()
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))  // verifies (and remembers) the 3 chunks
        #expect(store.verifiedChunks.count == 3)

        try flipInPlace(pattern: Array(value[70_000..<70_064]))  // chunk 1
        var flipped = value
        flipped[70_017] ^= 0x5A

        // The same store instance trusts the chunk it verified: it serves the changed byte.
        #expect(try store.data(forKey: "k") == Data(flipped))
        #expect(try store.read(forKey: "k", range: 70_000..<70_100) == Data(flipped[70_000..<70_100]))
        // verify() trusts nothing.
        #expect(try store.verify().corruptKeys == ["k"])
        #expect(try store.info(forKey: "k") != nil)  // verify changes nothing

        // A new store instance (as in a new process) hashes the chunk on its first read.
        store.close()
        store = try open()
        expectCorrupted { _ = try store.read(forKey: "k", range: 70_000..<70_100) }
        #expect(try store.info(forKey: "k") == nil)  // dropped
        #expect(try store.verify().isClean)
    }

    @Test func aStoreThatRemembersNothingHashesEveryRead() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 122)
        let value = generator.bulkBytes(2 * 65_536)
        let store = try open(memory: 0)
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))
        #expect(store.verifiedChunks.count == 0)
        try flipInPlace(pattern: Array(value[1_000..<1_064]))
        expectCorrupted { _ = try store.read(forKey: "k", range: 0..<10) }
    }

    @Test func theOldestChunkIsForgottenFirstAndHashedAgain() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 123)
        let value = generator.bulkBytes(3 * 65_536)
        let store = try open(memory: 2)
        try store.put(value, forKey: "k")
        for index in 0..<3 {  // chunk 0 first: pushed out by chunk 2
            _ = try store.read(forKey: "k", range: (index * 65_536)..<(index * 65_536 + 10))
        }
        #expect(store.verifiedChunks.count == 2)
        try flipInPlace(pattern: Array(value[2_000..<2_064]))
        expectCorrupted { _ = try store.read(forKey: "k", range: 0..<10) }
    }

    @Test func aDeletedChunkIsForgotten() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 124)
        let value = generator.bulkBytes(65_536)
        let store = try open()
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))
        #expect(store.verifiedChunks.count == 1)
        try store.remove(forKey: "k")
        #expect(store.verifiedChunks.count == 0)
    }

    @Test func aRewrittenChunkIsNotTrustedAtItsNewPlace() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 125)
        let value = generator.bulkBytes(2 * 65_536)
        let store = try open()
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))
        // Rewrite chunk 1's stored value with one bit of its first block
        // changed: LMDB copies it to other pages, where nothing was verified.
        let slot = try chunkSlots(store, key: "k")[1]
        try withWriteTransaction(store) { transaction in
            var stored = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            stored[stored.count - 65_536 + 3] ^= 1
            try transaction.txn.put(transaction.db.chunks, key: slot, value: stored)
        }
        // A range read verifies the blocks it returns: the last block is
        // intact and served; the first is caught, and so is a whole read.
        #expect(try store.read(forKey: "k", range: 131_000..<131_072) == Data(value[131_000..<131_072]))
        expectCorrupted { _ = try store.read(forKey: "k", range: 65_536..<65_546) }
    }

    // MARK: Reads of 1 MiB and more: chunks verified and copied on several cores

    @Test func aLargeReadIsVerifiedAndCopiedOnSeveralCoresAndRemembered() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 126)
        let value = generator.bulkBytes(40 * 65_536 + 1_234)  // 41 chunks, the last one short
        let store = try open()
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))
        #expect(store.verifiedChunks.count == 41)
        let range = 100_001..<(100_001 + (1 << 20) + 77)
        #expect(try store.read(forKey: "k", range: range) == Data(value[range]))
        let tail = (value.count - (1 << 20))..<value.count
        #expect(try store.read(forKey: "k", range: tail) == Data(value[tail]))
    }

    @Test func aCorruptChunkInALargeReadIsCaughtAndTheEntryDropped() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 127)
        let value = generator.bulkBytes(32 * 65_536)
        do {
            let store = try open()
            try store.put(value, forKey: "k")
        }
        try flipInPlace(pattern: Array(value[(20 * 65_536 + 500)..<(20 * 65_536 + 564)]))  // chunk 20
        let store = try open()
        expectCorrupted { _ = try store.data(forKey: "k") }
        #expect(try store.info(forKey: "k") == nil)
        #expect(store.verifiedChunks.count == 0)
    }

    @Test func aLargeReadOverAHoleIsNotCached() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 128)
        let value = generator.bulkBytes(32 * 65_536)
        let store = try open()
        let info = try store.prepareEntry(forKey: "k", length: value.count)
        try store.write(value[0..<(10 * 65_536)], at: 0, forKey: "k", version: info.version)
        try store.write(value[(11 * 65_536)...], at: 11 * 65_536, forKey: "k", version: info.version)
        let error = #expect(throws: StoreError.self) { _ = try store.read(forKey: "k", range: 0..<value.count) }
        guard case .rangeNotCached(_, let missing) = error else {
            Issue.record("expected rangeNotCached, got \(String(describing: error))")
            return
        }
        #expect(missing.lowerBound == 10 * 65_536)
        #expect(try store.read(forKey: "k", range: (11 * 65_536)..<value.count) == Data(value[(11 * 65_536)...]))
    }

    @Test func aLargeReadWithCompressedChunksTakesTheChunkByChunkPath() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let value = [UInt8]((0..<(24 * 65_536)).map { UInt8(truncatingIfNeeded: $0 / 1_000) })  // compresses
        let store = try open()
        try store.put(value, forKey: "k")
        #expect(try store.data(forKey: "k") == Data(value))
        let range = 5..<(value.count - 5)
        #expect(try store.read(forKey: "k", range: range) == Data(value[range]))
    }
}
