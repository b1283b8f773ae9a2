import Foundation
import Testing

@testable import MediaStore

/// Point 6: every chunk is checksummed and verified on read; corrupt bytes
/// are never returned, the read fails with `.corrupted` and the entry is
/// dropped. Each test runs on a plain store and on an encrypted one (a
/// flipped byte in a sealed block fails that block's authentication);
/// a wrong key never makes anything look corrupt.
@Suite struct IntegrityTests {
    static let configuration = StoreConfiguration(chunkSize: 65_536, initialMapSize: 64 << 20)
    static let key = try! StoreKey(bytes: Array(40..<72))

    let directory = temporaryPath("integrity")

    func open(encrypted: Bool, key: StoreKey = IntegrityTests.key) throws -> MediaStore {
        var configuration = Self.configuration
        configuration.encryption = encrypted ? StoreConfiguration.Encryption(key: key) : nil
        return try MediaStore(directory: directory, configuration: configuration)
    }

    /// 64 bytes of `data.mdb` that hold byte `offset` of `key`'s chunked
    /// value `value` and the 63 after it: the value's own bytes in a plain
    /// store (stored raw), the sealed bytes of that place (within one
    /// block) in an encrypted one. Flipping the 18th of them damages
    /// exactly that chunk (and block).
    func storedPattern(encrypted: Bool, value: [UInt8], key: String, offset: Int) throws -> [UInt8] {
        guard encrypted else { return Array(value[offset..<offset + 64]) }
        let store = try open(encrypted: true)
        defer { store.close() }
        let chunkSize = Self.configuration.chunkSize
        let slot = try chunkSlots(store, key: key)[offset / chunkSize]
        let inChunk = offset % chunkSize
        let inBlock = inChunk % ChunkSealer.blockSize
        try #require(inBlock + 64 <= ChunkSealer.blockSize, "the pattern must lie in one block")
        let at = (inChunk / ChunkSealer.blockSize) * (ChunkSealer.blockSize + ChunkSealer.tagSize) + inBlock
        return try withReadTransaction(store) { transaction in
            let stored = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            return try stored.withUnsafeBytes { buffer in
                let payload = try #require(ChunkValue(buffer)).payload
                return Array(payload[at..<at + 64])
            }
        }
    }

    /// Flips one byte in every copy of `pattern` inside `data.mdb` (the
    /// store must be closed); returns how many copies there were.
    @discardableResult
    func corruptFile(pattern: [UInt8]) throws -> Int {
        let file = directory.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: file)
        var copies = 0
        var searchFrom = bytes.startIndex
        while let found = bytes.range(of: Data(pattern), in: searchFrom..<bytes.endIndex) {
            bytes[found.lowerBound + 17] ^= 0x5A
            copies += 1
            searchFrom = found.upperBound
        }
        try bytes.write(to: file)
        return copies
    }

    /// Replaces the stored value of an entry's chunk through the internal API.
    func tamperWithChunk(_ store: MediaStore, key: String, index: Int, _ edit: (inout [UInt8]) -> Void) throws {
        let slots = try chunkSlots(store, key: key)
        try #require(index < slots.count)
        let slot = slots[index]
        try withWriteTransaction(store) { transaction in
            var value = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            edit(&value)
            try transaction.txn.put(transaction.db.chunks, key: slot, value: value)
        }
    }

    func expectCorrupted(_ key: String, _ body: () throws -> Void) {
        let error = #expect(throws: StoreError.self) { try body() }
        guard case .corrupted(let reported, _) = error else {
            Issue.record("expected .corrupted for \(key), got \(String(describing: error))")
            return
        }
        #expect(reported == key)
    }

    @Test(arguments: [false, true]) func aFlippedByteInTheFileIsCaught(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 61)
        let bad = generator.bulkBytes(100_000)  // random: stored raw, verbatim in the file
        let good = generator.bulkBytes(100_000)
        do {
            let store = try open(encrypted: encrypted)
            try store.put(bad, forKey: "bad")
            try store.put(good, forKey: "good")
        }
        let pattern = try storedPattern(encrypted: encrypted, value: bad, key: "bad", offset: 70_000)
        #expect(try corruptFile(pattern: pattern) == 1)

        let store = try open(encrypted: encrypted)
        let report = try store.verify()
        #expect(!report.isClean)
        #expect(report.corruptKeys == ["bad"])
        #expect(try store.info(forKey: "bad") != nil)  // verify changes nothing

        expectCorrupted("bad") { _ = try store.data(forKey: "bad") }
        #expect(try store.info(forKey: "bad") == nil)
        #expect(try store.data(forKey: "bad") == nil)
        #expect(try store.data(forKey: "good") == Data(good))
        #expect(try store.statistics().chunkCount == 2)  // good's 2 chunks; bad's were released
        let after = try store.verify()
        #expect(after.isClean, "\(after.problems)")
    }

    @Test(arguments: [false, true]) func aRangeReadTouchesOnlyItsChunksAndDropsOnACorruptOne(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 62)
        let value = generator.bulkBytes(3 * 65_536)
        do {
            let store = try open(encrypted: encrypted)
            try store.put(value, forKey: "k")
        }
        let pattern = try storedPattern(encrypted: encrypted, value: value, key: "k", offset: 140_000)
        #expect(try corruptFile(pattern: pattern) == 1)  // chunk 2

        let store = try open(encrypted: encrypted)
        // Chunks 0 and 1 are fine and are all these reads need.
        #expect(try store.read(forKey: "k", range: 10..<100_000) == Data(value[10..<100_000]))
        var streamed = Data()
        try store.read(forKey: "k", range: 0..<131_072) { streamed.append($0) }
        #expect(streamed == Data(value[0..<131_072]))
        #expect(try store.info(forKey: "k") != nil)

        expectCorrupted("k") { _ = try store.read(forKey: "k", range: 131_000..<131_100) }
        #expect(try store.info(forKey: "k") == nil)
        #expect(try store.statistics().chunkCount == 0)
        #expect(try store.verify().isClean)
    }

    @Test(arguments: [false, true]) func everyEntrySharingACorruptChunkFailsToo(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 63)
        let value = generator.bulkBytes(100_000)
        do {
            let store = try open(encrypted: encrypted)
            try store.put(value, forKey: "a")
            try store.put(value, forKey: "b")
        }
        #expect(
            try corruptFile(pattern: storedPattern(encrypted: encrypted, value: value, key: "a", offset: 1_000)) == 1)
        let store = try open(encrypted: encrypted)
        #expect(Set(try store.verify().corruptKeys) == ["a", "b"])
        expectCorrupted("a") { _ = try store.data(forKey: "a") }
        expectCorrupted("b") { _ = try store.data(forKey: "b") }
        #expect(try store.statistics().entryCount == 0)
        #expect(try store.statistics().chunkCount == 0)
        #expect(try store.verify().isClean)
    }

    /// Compressed in a plain store; sealed (never compressed) in an encrypted one.
    @Test(arguments: [false, true]) func aCorruptCompressedChunkIsCaught(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open(encrypted: encrypted)
        let text = Array(String(repeating: "compressible text, ", count: 10_000).utf8)
        try store.put(text, forKey: "k")
        if !encrypted { #expect(try store.statistics().storedBytes < text.count / 10) }
        try tamperWithChunk(store, key: "k", index: 1) { $0[$0.count / 2] ^= 0xFF }
        expectCorrupted("k") { _ = try store.data(forKey: "k") }
        #expect(try store.info(forKey: "k") == nil)
        #expect(try store.verify().isClean)
    }

    @Test(arguments: [false, true]) func aCorruptChunkHeaderIsCaught(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open(encrypted: encrypted)
        var generator = SplitMix64(seed: 64)
        try store.put(generator.bulkBytes(70_000), forKey: "magic")
        try store.put(generator.bulkBytes(70_000), forKey: "length")
        try tamperWithChunk(store, key: "magic", index: 0) { $0[0] = 0 }
        try tamperWithChunk(store, key: "length", index: 1) { $0[4] ^= 1 }
        expectCorrupted("magic") { _ = try store.data(forKey: "magic") }
        expectCorrupted("length") { _ = try store.read(forKey: "length", range: 65_536..<65_537) }
        #expect(try store.statistics().entryCount == 0)
    }

    /// Small values live inside their index record, not in chunks; they
    /// are still checked against their content digest.
    @Test func aCorruptInlineValueIsCaught() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 65)
        // At most PackStore.inlineMaximum bytes: kept in the record (larger ones are packed: PackTests).
        let value = generator.bulkBytes(PackStore.inlineMaximum)
        do {
            let store = try open(encrypted: false)
            try store.put(value, forKey: "small")
            try store.put([1, 2, 3], forKey: "other")
        }
        #expect(try corruptFile(pattern: Array(value[40..<104])) >= 1)
        let store = try open(encrypted: false)
        #expect(try store.verify().corruptKeys == ["small"])
        expectCorrupted("small") { _ = try store.read(forKey: "small", range: 0..<10) }
        #expect(try store.info(forKey: "small") == nil)

        // And through data(forKey:).
        try store.put(value, forKey: "small")
        _ = try store.data(forKey: "small")
        try withWriteTransaction(store) { transaction in
            var (slot, record) = try #require(try transaction.index.find("small"))
            record.inlineBytes[3] ^= 1
            try transaction.index.save(record, at: slot)
        }
        expectCorrupted("small") { _ = try store.data(forKey: "small") }
        #expect(try store.info(forKey: "small") == nil)
        #expect(try store.data(forKey: "other") == Data([1, 2, 3]))
        #expect(try store.verify().isClean)
    }

    /// A record whose length says more than its inline value holds (its
    /// digest still matching the bytes held) is corrupt: the read fails
    /// and drops it, instead of reading past the value (it trapped).
    @Test(arguments: [false, true]) func anInlineValueShorterThanItsLengthIsCaught(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open(encrypted: encrypted)
        let value = Array("a small value".utf8)
        for key in ["whole", "range"] {
            try store.put(value, forKey: key)
            try withWriteTransaction(store) { transaction in
                var (slot, record) = try #require(try transaction.index.find(key))
                try #require(record.isInline)
                record.length = value.count + 100
                try transaction.index.save(record, at: slot)
            }
        }
        expectCorrupted("whole") { _ = try store.data(forKey: "whole") }
        expectCorrupted("range") { _ = try store.infoAndBytes(forKey: "range", from: 0, maxBytes: 200) }
        #expect(try store.info(forKey: "whole") == nil && store.info(forKey: "range") == nil)
    }

    /// An encrypted store opened with the wrong key is refused before
    /// anything is read: nothing is reported corrupt, dropped or changed,
    /// and the right key then reads every entry.
    @Test func aWrongKeyDropsNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 66)
        let values = (0..<4).map { generator.bulkBytes([100, 3_000, 100_000, 200_000][$0]) }
        do {
            let store = try open(encrypted: true)
            for (index, value) in values.enumerated() { try store.put(value, forKey: "k\(index)") }
        }
        let file = directory.appendingPathComponent("data.mdb")
        let before = try Data(contentsOf: file)
        let wrong = try StoreKey(bytes: Array(41..<73))
        for _ in 0..<3 {
            #expect(throws: StoreError.wrongKey(path: directory.path)) { try open(encrypted: true, key: wrong) }
            #expect(throws: StoreError.wrongKey(path: directory.path)) {
                try MediaStore.openReadOnly(directory: directory, key: wrong)
            }
        }
        #expect(try Data(contentsOf: file) == before)
        let store = try open(encrypted: true)
        for (index, value) in values.enumerated() { #expect(try store.data(forKey: "k\(index)") == Data(value)) }
        #expect(try store.statistics().entryCount == values.count)
        #expect(try store.verify().isClean)
    }
}
