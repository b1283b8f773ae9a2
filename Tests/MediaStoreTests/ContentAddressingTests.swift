import Foundation
import Testing

@testable import MediaStore

/// Point 3: chunks are addressed by XXH3-128, stored once, reference-counted,
/// and shared only after their bytes compare equal.
@Suite struct ContentAddressingTests {
    // Sizes of plain chunks (a sealed one carries its tags).
    @Test(.disabled(if: TestStore.encryptsByDefault, "stored sizes of plain chunks"))
    func identicalContentIsStoredOnce() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 31)
        let value = generator.bulkBytes(700_000)  // 3 chunks, random: stored raw
        try t.store.put(value, forKey: "a")
        let first = try t.store.statistics()
        #expect(first.chunkCount == 3)
        #expect(first.storedBytes == CompressionTests.rawStoredSize(value.count))

        try t.store.put(value, forKey: "b")
        let writer = try t.store.makeWriter(forKey: "c")
        try writer.append(value)
        try writer.finish()
        let shared = try t.store.statistics()
        #expect(shared.chunkCount == 3)
        #expect(shared.storedBytes == first.storedBytes)
        #expect(shared.uniqueChunkBytes == value.count)
        #expect(shared.logicalBytes == 3 * value.count)
        #expect(try referenceCounts(t.store, key: "a") == [3, 3, 3])

        #expect(try t.store.remove(forKey: "a"))
        #expect(try t.store.statistics().chunkCount == 3)
        #expect(try referenceCounts(t.store, key: "b") == [2, 2, 2])
        #expect(try t.store.data(forKey: "b") == Data(value))
        try t.reopen()
        #expect(try t.store.remove(forKey: "b"))
        #expect(try t.store.statistics().chunkCount == 3)
        #expect(try referenceCounts(t.store, key: "c") == [1, 1, 1])
        #expect(try t.store.data(forKey: "c") == Data(value))
        #expect(try t.store.remove(forKey: "c"))
        let empty = try t.store.statistics()
        #expect(empty.chunkCount == 0)
        #expect(empty.storedBytes == 0)
        #expect(empty.logicalBytes == 0)
        #expect(try t.store.verify().isClean)
    }

    @Test func chunksAreSharedAcrossDifferentValues() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 32)
        let chunk = t.store.configuration.chunkSize
        let common = generator.bulkBytes(2 * chunk)
        let a = common + generator.bulkBytes(1_000)
        let b = common + generator.bulkBytes(2_000)
        try t.store.put(a, forKey: "a")
        try t.store.put(b, forKey: "b")
        #expect(try t.store.statistics().chunkCount == 4)  // 2 shared + 2 tails
        // The same chunk appears twice inside one value: one chunk, two references.
        let twice = common[..<chunk] + common[..<chunk]
        try t.store.put(Array(twice), forKey: "twice")
        #expect(try t.store.statistics().chunkCount == 4)
        #expect(try referenceCounts(t.store, key: "twice") == [4, 4])
        try t.store.removeAll()
        #expect(try t.store.statistics().chunkCount == 0)
        #expect(try t.store.verify().isClean)
    }

    @Test func replacingAndRemovingReleasesReferences() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 33)
        let value = generator.bulkBytes(300_000)
        try t.store.put(value, forKey: "a")
        try t.store.put(value, forKey: "a")  // same content again under the same key
        #expect(try referenceCounts(t.store, key: "a") == [1, 1])
        try t.store.put(generator.bulkBytes(10_000), forKey: "a")
        #expect(try t.store.statistics().chunkCount == 1)
        #expect(try t.store.verify().isClean)
    }

    @Test(
        .enabled(if: ExternalTool.available("xxh128sum"), "needs xxh128sum (the xxhash package)"),
        arguments: [0, 1, 4_096, 4_097, 261_988, 261_989, 1_000_000])
    func contentDigestEqualsXXH128Sum(size: Int) throws {
        let tool = "/usr/bin/xxh128sum"
        try #require(
            FileManager.default.isExecutableFile(atPath: tool),
            "\(tool) is missing: install the xxhash package (apt-get install xxhash / brew install xxhash)")
        let t = try TestStore()
        var generator = SplitMix64(seed: UInt64(size) + 34)
        let value = generator.bulkBytes(size)
        let file = temporaryPath("xxh").appendingPathExtension("bin")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(value).write(to: file)
        let printed = try runTool(tool, [file.path]).split(separator: " ").first.map(String.init)

        let put = try t.store.put(value, forKey: "put")
        #expect(put.contentDigest?.hexString == printed)
        #expect(put.contentDigest == ContentDigest(of: value))

        let writer = try t.store.makeWriter(forKey: "streamed")
        try writer.append(value)
        #expect(try writer.finish().contentDigest?.hexString == printed)

        // A sparse entry filled back to front gets the digest of the whole.
        let chunk = t.store.configuration.chunkSize
        let version = try t.store.prepareEntry(forKey: "sparse", length: size).version
        for start in stride(from: 0, to: size, by: chunk).reversed() {
            try t.store.write(value[start..<min(size, start + chunk)], at: start, forKey: "sparse", version: version)
        }
        #expect(try t.store.info(forKey: "sparse")?.contentDigest?.hexString == printed)
    }

    /// Two different chunks whose digests collide cannot be made with real
    /// XXH3, so the test plants a stored chunk under the digest of other
    /// bytes (what a collision leaves in `chunks`) and checks that a put of
    /// those other bytes does not share it.
    @Test(
        .disabled(
            if: TestStore.encryptsByDefault,
            "plants a chunk under its plain digest; EncryptedStoreTests covers keyed identities"))
    func dedupIsByteVerified() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 35)
        let planted = generator.bulkBytes(10_000)
        let value = generator.bulkBytes(10_000)
        let digest = ContentDigest(of: value)
        let collidingSlot = Slot(digest, ordinal: 0)
        try withWriteTransaction(t.store) { transaction in
            let header = ChunkHeader(codec: .raw, rawLength: planted.count, storedLength: planted.count)
            let total = ChunkHeader.size + planted.count
            try transaction.txn.putReserved(transaction.db.chunks, key: collidingSlot, count: total) { out in
                header.encode(into: out)
                planted.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: out[ChunkHeader.size...]).copyMemory(from: $0)
                }
            }
            transaction.updateCounters {
                $0.chunkCount += 1
                $0.storedBytes += total
                $0.uniqueChunkBytes += planted.count
            }
        }
        #expect(try t.store.verify().isClean)

        try t.store.put(value, forKey: "a")
        #expect(try t.store.data(forKey: "a") == Data(value))
        #expect(try t.store.statistics().chunkCount == 2)
        #expect(try chunkSlots(t.store, key: "a") == [Slot(digest, ordinal: 1)])

        // The genuine copy is shared from then on; the planted one never is.
        try t.store.put(value, forKey: "b")
        #expect(try t.store.statistics().chunkCount == 2)
        #expect(try chunkSlots(t.store, key: "b") == [Slot(digest, ordinal: 1)])
        #expect(try referenceCounts(t.store, key: "b") == [2])
        #expect(try t.store.data(forKey: "b") == Data(value))
        #expect(try t.store.verify().isClean)

        try t.store.remove(forKey: "a")
        try t.store.remove(forKey: "b")
        #expect(try t.store.statistics().chunkCount == 1)  // only the planted chunk is left
    }
}

/// The chunk slots of an entry's extents, in order.
func chunkSlots(_ store: MediaStore, key: String) throws -> [Slot] {
    try withReadTransaction(store) { transaction in
        guard let (_, record) = try transaction.index.find(key) else { return [] }
        return try transaction.extents.rows(entryID: record.entryID).map(\.row.chunk)
    }
}

/// The reference counts of an entry's chunks, in order.
func referenceCounts(_ store: MediaStore, key: String) throws -> [Int] {
    let slots = try chunkSlots(store, key: key)
    return try withReadTransaction(store) { transaction in try slots.map { try transaction.chunks.referenceCount($0) } }
}
