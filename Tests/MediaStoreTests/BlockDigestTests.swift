import CXXHash
import Foundation
import Testing

@testable import MediaStore

/// Store format 3: a raw chunk of more than one block carries one XXH3-64
/// digest per 16 KiB block, so a range read verifies only the blocks it
/// returns (MediaStore.docc/StoreFormat.md, "Integrity on reads").
@Suite struct BlockDigestLayoutTests {
    @Test func blocksAreSixteenKiBAndAtMostSixtyFourPerChunk() {
        #expect(BlockDigests.shift(rawLength: StoreConfiguration.defaultChunkSize) == 14)
        #expect(BlockDigests.count(rawLength: StoreConfiguration.defaultChunkSize, shift: 14) == 16)
        #expect(BlockDigests.shift(rawLength: 1 << 20) == 14)  // exactly 64 blocks
        #expect(BlockDigests.shift(rawLength: (1 << 20) + 1) == 15)  // 33 blocks of 32 KiB
        #expect(BlockDigests.count(rawLength: (1 << 20) + 1, shift: 15) == 33)
        #expect(!BlockDigests.applies(rawLength: 16_384))
        #expect(BlockDigests.applies(rawLength: 16_385))
    }

    @Test func theDefaultChunkFillsSixtyFourPagesExactly() {
        let length = StoreConfiguration.defaultChunkSize
        let header = ChunkValue.header(codec: .raw, rawLength: length, storedLength: length)
        #expect(ChunkValue.size(header) == 64 * 4096 - 16)
    }

    @Test func masksCoverExactlyTheirBlocks() {
        #expect(BlockDigests.mask(0..<0) == 0)
        #expect(BlockDigests.mask(3..<5) == 0b11000)
        #expect(BlockDigests.mask(0..<64) == .max)
        #expect(BlockDigests.mask(63..<64) == 1 << 63)
        #expect(BlockDigests.mask(0..<16) == 0xFFFF)
    }

    /// The table holds libxxhash's XXH3-64 of each block, little-endian,
    /// between the header and the bytes; the header's third byte is the shift.
    @Test func aRawChunkValueCarriesItsBlockDigests() throws {
        var generator = SplitMix64(seed: 301)
        let bytes = generator.bulkBytes(40_000)  // 3 blocks, the last one short
        let header = ChunkValue.header(codec: .raw, rawLength: bytes.count, storedLength: bytes.count)
        #expect(header.blockShift == 14)
        var stored = [UInt8](repeating: 0, count: ChunkValue.size(header))
        #expect(stored.count == 12 + 3 * 8 + 40_000)
        stored.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { ChunkValue.write(header, payload: $0, into: out) }
        }
        #expect(stored[2] == 14)
        for (index, range) in [0..<16_384, 16_384..<32_768, 32_768..<40_000].enumerated() {
            let expected = bytes[range].withUnsafeBytes { XXH3_64bits($0.baseAddress, $0.count) }
            let table = stored[(12 + 8 * index)..<(20 + 8 * index)].withUnsafeBytes {
                $0.loadUnaligned(as: UInt64.self)
            }
            #expect(UInt64(littleEndian: table) == expected)
        }
        #expect(Array(stored[36...]) == bytes)
        try stored.withUnsafeBytes { buffer in
            let value = try #require(ChunkValue(buffer))
            #expect(value.header == header)
            #expect(Array(value.payload) == bytes)
            let blocks = try #require(value.blocks)
            #expect(blocks.count == 3)
            #expect(blocks.blocks(covering: 16_383..<16_385) == 0..<2)
            #expect(blocks.verify(value.payload, blocks: 0..<3) == 0b111)
            #expect(blocks.verify(value.payload, blocks: 1..<3, skipping: 0b10) == 0b100)
        }
        // One flipped byte fails its block only.
        stored[12 + 24 + 20_000] ^= 1
        stored.withUnsafeBytes { buffer in
            let value = ChunkValue(buffer)!
            #expect(value.blocks!.verify(value.payload, blocks: 0..<1) == 0b1)
            #expect(value.blocks!.verify(value.payload, blocks: 1..<2) == nil)
        }
    }

    @Test func smallAndCompressedChunksHaveNoTable() {
        #expect(ChunkValue.header(codec: .raw, rawLength: 16_384, storedLength: 16_384).blockShift == 0)
        #expect(ChunkValue.header(codec: .zstd, rawLength: 200_000, storedLength: 900).blockShift == 0)
    }

    /// Headers that announce a table they cannot have are refused, never trusted.
    @Test(arguments: [
        (UInt8(14), UInt8(1), 200_000, 900),  // a table on a compressed chunk
        (UInt8(13), UInt8(0), 200_000, 200_000),  // blocks below 16 KiB
        (UInt8(31), UInt8(0), 200_000, 200_000),  // blocks above 1 GiB
        (UInt8(14), UInt8(0), 16_000, 16_000),  // a table of one block
        (UInt8(14), UInt8(0), 2 << 20, 2 << 20),  // more than 64 blocks
    ])
    func impossibleTablesAreRefused(shift: UInt8, codec: UInt8, raw: Int, stored: Int) {
        var value = [UInt8](repeating: 0, count: 12 + BlockDigests.size(rawLength: raw, shift: Int(shift)) + stored)
        value[0] = ChunkHeader.magic
        value[1] = codec
        value[2] = shift
        value.withUnsafeMutableBytes {
            $0.storeBytes(of: UInt32(raw).littleEndian, toByteOffset: 4, as: UInt32.self)
            $0.storeBytes(of: UInt32(stored).littleEndian, toByteOffset: 8, as: UInt32.self)
        }
        #expect(value.withUnsafeBytes { ChunkValue($0) } == nil)
    }

    @Test func aValueOneByteShortOrWithTheReservedByteSetIsRefused() {
        let bytes = [UInt8](repeating: 7, count: 20_000)
        let header = ChunkValue.header(codec: .raw, rawLength: bytes.count, storedLength: bytes.count)
        var stored = [UInt8](repeating: 0, count: ChunkValue.size(header))
        stored.withUnsafeMutableBytes { out in
            bytes.withUnsafeBytes { ChunkValue.write(header, payload: $0, into: out) }
        }
        #expect(stored.withUnsafeBytes { ChunkValue($0) } != nil)
        #expect(Array(stored.dropLast()).withUnsafeBytes { ChunkValue($0) } == nil)
        stored[3] = 1
        #expect(stored.withUnsafeBytes { ChunkValue($0) } == nil)
    }
}

/// What a range read verifies, and what `verify()` adds, on a real store.
@Suite struct BlockDigestReadTests {
    let directory = temporaryPath("block-digests")

    func open() throws -> MediaStore {
        try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
    }

    /// The stored value of the entry's chunk `index`.
    func storedChunk(_ store: MediaStore, _ index: Int) throws -> [UInt8] {
        let slot = try chunkSlots(store, key: "k")[index]
        return try #require(try withReadTransaction(store) { try $0.txn.value($0.db.chunks, key: slot) })
    }

    /// Replaces the stored value of the entry's chunk `index`.
    func rewriteChunk(_ store: MediaStore, _ index: Int, _ change: (inout [UInt8]) -> Void) throws {
        let slot = try chunkSlots(store, key: "k")[index]
        try withWriteTransaction(store) { transaction in
            var stored = try #require(try transaction.txn.value(transaction.db.chunks, key: slot))
            change(&stored)
            try transaction.txn.put(transaction.db.chunks, key: slot, value: stored)
        }
    }

    /// The blocks of chunk `index` this store instance has verified.
    func verifiedBlocks(_ store: MediaStore, _ index: Int) throws -> UInt64 {
        let slot = try chunkSlots(store, key: "k")[index]
        return try withReadTransaction(store) { transaction in
            try transaction.txn.withValue(transaction.db.chunks, key: slot) { buffer in
                store.verifiedChunks.verifiedBlocks(slot: slot, digest: slot.digest, payload: buffer!)
            }
        }
    }

    @Test func aColdRangeReadVerifiesOnlyTheBlocksItReturns() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 302)
        let value = generator.bulkBytes(2 * StoreConfiguration.defaultChunkSize)
        var store = try open()
        try store.put(value, forKey: "k")
        store.close()
        store = try open()
        #expect(try verifiedBlocks(store, 0) == 0)
        #expect(try store.read(forKey: "k", range: 20_000..<40_000) == Data(value[20_000..<40_000]))
        #expect(try verifiedBlocks(store, 0) == 0b110)  // blocks 1 and 2 only
        #expect(try store.read(forKey: "k", range: 0..<10) == Data(value[0..<10]))
        #expect(try verifiedBlocks(store, 0) == 0b111)
        // Every block verified one by one: the chunk counts as verified whole.
        for block in 3..<16 {
            _ = try store.read(forKey: "k", range: (block * 16_384)..<(block * 16_384 + 1))
        }
        #expect(try verifiedBlocks(store, 0) == .max)
        // A whole read verifies the chunk whole.
        #expect(try store.data(forKey: "k") == Data(value))
        #expect(try verifiedBlocks(store, 1) == .max)
    }

    @Test func aFlippedByteFailsTheReadsOfItsBlockOnly() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 303)
        let value = generator.bulkBytes(StoreConfiguration.defaultChunkSize)
        let store = try open()
        try store.put(value, forKey: "k")
        let payloadStart = try storedChunk(store, 0).count - value.count
        try rewriteChunk(store, 0) { $0[payloadStart + 5 * 16_384 + 77] ^= 0x10 }  // block 5
        #expect(try store.read(forKey: "k", range: 0..<81_920) == Data(value[0..<81_920]))  // blocks 0-4
        #expect(try store.read(forKey: "k", range: 98_304..<100_000) == Data(value[98_304..<100_000]))  // block 6
        let error = #expect(throws: StoreError.self) { try store.read(forKey: "k", range: 81_000..<82_000) }
        guard case .corrupted(let key, let reason) = error else {
            Issue.record("expected .corrupted, got \(String(describing: error))")
            return
        }
        #expect(key == "k")
        #expect(reason.contains("checksum"))
    }

    /// A damaged table with intact bytes: whole reads still verify against
    /// the chunk's own digest and return the right bytes; a range read of
    /// the block refuses; `verify()` reports the entry.
    @Test func aDamagedTableIsReportedByVerify() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 304)
        let value = generator.bulkBytes(StoreConfiguration.defaultChunkSize)
        var store = try open()
        try store.put(value, forKey: "k")
        try rewriteChunk(store, 0) { $0[12 + 8 * 3] ^= 1 }  // block 3's digest
        store.close()
        store = try open()
        #expect(try store.verify().corruptKeys == ["k"])
        #expect(try store.data(forKey: "k") == Data(value))
        store.close()
        store = try open()
        #expect(throws: StoreError.self) { try store.read(forKey: "k", range: 50_000..<50_010) }
    }

    /// Chunks written by format 2 (no table) still read, range reads
    /// verify them whole, and the store is marked format 3 when opened for writing.
    @Test func aFormatTwoStoreReadsAndIsMarkedFormatThree() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 305)
        let value = generator.bulkBytes(3 * StoreConfiguration.defaultChunkSize + 999)
        do {
            let store = try open()
            try store.put(value, forKey: "k")
            for index in 0..<4 {
                try withWriteTransaction(store) { transaction in
                    transaction.updateCounters { $0.storedBytes -= index < 3 ? 16 * 8 : 0 }
                }
                try rewriteChunk(store, index) { stored in
                    let payload = Array(
                        stored[(stored.count - (index < 3 ? StoreConfiguration.defaultChunkSize : 999))...])
                    let header = ChunkHeader(codec: .raw, rawLength: payload.count, storedLength: payload.count)
                    stored = [UInt8](repeating: 0, count: ChunkValue.size(storedLength: payload.count))
                    stored.withUnsafeMutableBytes { out in
                        payload.withUnsafeBytes { ChunkValue.write(header, payload: $0, into: out) }
                    }
                }
            }
            try withWriteTransaction(store) { transaction in
                try transaction.txn.put(
                    transaction.db.meta, key: Array("format".utf8), value: StoreFormat.magic + [2, 0])
            }
            #expect(try storedChunk(store, 0).count == 12 + StoreConfiguration.defaultChunkSize)
            store.close()
        }
        let store = try open()
        let formatBytes = try withReadTransaction(store) { try $0.txn.value($0.db.meta, key: Array("format".utf8)) }
        #expect(formatBytes.flatMap(StoreFormat.version(of:)) == StoreFormat.version)
        #expect(try store.read(forKey: "k", range: 300_000..<300_100) == Data(value[300_000..<300_100]))
        #expect(try verifiedBlocks(store, 1) == .max)  // no table: verified whole
        #expect(try store.data(forKey: "k") == Data(value))
        #expect(try store.verify().isClean)
        // A flipped byte in a table-less chunk fails any range read of it.
        try rewriteChunk(store, 2) { $0[$0.count - 5] ^= 1 }
        #expect(throws: StoreError.self) { try store.read(forKey: "k", range: 600_000..<600_010) }
    }
}
