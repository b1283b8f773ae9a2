import Foundation
import TestSupport
import Testing

@testable import MediaStore

/// `infoAndBytes(forKey:from:maxBytes:)`: an entry's info and its bytes
/// cached from an offset on, read in one transaction, on plain and
/// encrypted stores; the bytes stop at the end, at the first hole and at
/// the bound asked for.
@Suite struct InfoAndBytesTests {
    static let chunkSize = 16_384
    static let key = try! StoreKey(bytes: Array(100..<132))

    static func store(encrypted: Bool) throws -> TestStore {
        var configuration = StoreConfiguration(chunkSize: chunkSize, initialMapSize: 64 << 20)
        configuration.encryption = encrypted ? StoreConfiguration.Encryption(key: key) : nil
        return try TestStore(configuration: configuration, exactly: true)
    }

    /// Bytes whose value tells their place (two bytes per position).
    static func content(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 % 2 == 0 ? $0 >> 1 : $0 >> 9) }
    }

    @Test(arguments: [false, true]) func aCompleteEntryGivesItsInfoAndTheBytesAskedFor(encrypted: Bool) throws {
        let test = try Self.store(encrypted: encrypted)
        let value = Self.content(3 * Self.chunkSize + 1_000)
        let stored = try test.store.put(
            value, forKey: "k", options: WriteOptions(metadata: EntryMetadata(mimeType: "audio/mp4", etag: "\"e\"")))

        let head = try #require(try test.store.infoAndBytes(forKey: "k", from: 0, maxBytes: 2))
        #expect(head.offset == 0 && head.bytes == Data(value[0..<2]))
        #expect(head.info.version == stored.version && head.info.length == value.count && head.info.isComplete)
        #expect(head.info.metadata.etag == "\"e\"" && head.info.contentDigest == stored.contentDigest)

        // Across chunks, from inside one.
        let middle = try #require(try test.store.infoAndBytes(forKey: "k", from: 10_000, maxBytes: 30_000))
        #expect(middle.offset == 10_000 && middle.bytes == Data(value[10_000..<40_000]))
        // The bound past the end (even Int.max) stops at the end.
        let tail = try #require(try test.store.infoAndBytes(forKey: "k", from: 40_000, maxBytes: .max))
        #expect(tail.bytes == Data(value[40_000...]))
        // Only the info.
        let info = try #require(try test.store.infoAndBytes(forKey: "k", from: 0, maxBytes: 0))
        #expect(info.bytes.isEmpty && info.info.version == stored.version)
        // At or past the end: the info, no bytes.
        for offset in [value.count, value.count + 1, 1 << 40] {
            let past = try #require(try test.store.infoAndBytes(forKey: "k", from: offset, maxBytes: 100))
            #expect(past.bytes.isEmpty && past.offset == offset && past.info.length == value.count)
        }
        #expect(try test.store.infoAndBytes(forKey: "absent", from: 0, maxBytes: 100) == nil)
        #expect(throws: StoreError.self) { try test.store.infoAndBytes(forKey: "k", from: -1, maxBytes: 10) }
        #expect(throws: StoreError.self) { try test.store.infoAndBytes(forKey: "k", from: 0, maxBytes: -1) }
    }

    @Test(arguments: [false, true]) func aPartialEntryGivesTheBytesUpToItsFirstHole(encrypted: Bool) throws {
        let test = try Self.store(encrypted: encrypted)
        let size = Self.chunkSize
        let value = Self.content(6 * size)
        let version = try test.store.prepareEntry(forKey: "p", length: value.count).version
        // Chunk 0 whole, chunk 1 short (to 20,000), chunk 2 missing, chunks 3 and 4 whole.
        try test.store.write(value[0..<20_000], at: 0, forKey: "p", version: version)
        try test.store.write(value[(3 * size)..<(5 * size)], at: 3 * size, forKey: "p", version: version)

        func bytes(from offset: Int, _ maxBytes: Int) throws -> Data {
            let head = try #require(try test.store.infoAndBytes(forKey: "p", from: offset, maxBytes: maxBytes))
            #expect(head.info.version == version && !head.info.isComplete)
            #expect(head.info.cachedBytes == 20_000 + 2 * size)
            return head.bytes
        }
        #expect(try bytes(from: 0, .max) == Data(value[0..<20_000]))
        #expect(try bytes(from: 100, 50) == Data(value[100..<150]))
        #expect(try bytes(from: 10_000, 1 << 20) == Data(value[10_000..<20_000]))
        // In the hole after the short chunk, in the missing chunk, past the stored chunks.
        #expect(try bytes(from: 20_000, 100).isEmpty)
        #expect(try bytes(from: 2 * size + 5, 100).isEmpty)
        #expect(try bytes(from: 5 * size, 100).isEmpty)
        // From a stored chunk on, up to the next hole.
        #expect(try bytes(from: 3 * size + 7, .max) == Data(value[(3 * size + 7)..<(5 * size)]))
        #expect(try bytes(from: 3 * size, size + 10) == Data(value[(3 * size)..<(4 * size + 10)]))
    }

    @Test(arguments: [false, true]) func anEntryOfUnknownLengthGivesWhatIsStored(encrypted: Bool) throws {
        let test = try Self.store(encrypted: encrypted)
        let value = Self.content(2 * Self.chunkSize)
        let version = try test.store.prepareEntry(forKey: "u", length: nil).version
        try test.store.write(value, at: 0, forKey: "u", version: version)
        let head = try #require(try test.store.infoAndBytes(forKey: "u", from: 5, maxBytes: .max))
        #expect(head.info.length == nil && head.bytes == Data(value[5...]))
    }

    @Test(arguments: [false, true]) func smallValuesAndExpiredEntries(encrypted: Bool) throws {
        let test = try Self.store(encrypted: encrypted)
        let small = Self.content(300)
        try test.store.put(small, forKey: "small")
        let head = try #require(try test.store.infoAndBytes(forKey: "small", from: 10, maxBytes: 20))
        #expect(head.bytes == Data(small[10..<30]) && head.info.length == 300)
        #expect(try test.store.infoAndBytes(forKey: "small", from: 290, maxBytes: 20)?.bytes == Data(small[290...]))

        let value = Self.content(40_000)
        try test.store.put(value, forKey: "old", options: WriteOptions(expiry: .at(Date(timeIntervalSinceNow: -5))))
        #expect(try test.store.infoAndBytes(forKey: "old", from: 0, maxBytes: 10) == nil)
        let expired = try #require(
            try test.store.infoAndBytes(forKey: "old", from: 0, maxBytes: 10, includeExpired: true))
        #expect(expired.bytes == Data(value[0..<10]) && expired.info.isExpired())
    }
}

extension IntegrityTests {
    @Test(arguments: [false, true]) func infoAndBytesDropsAnEntryWhoseBytesFailTheirCheck(encrypted: Bool) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 63)
        let value = generator.bulkBytes(3 * 65_536)
        do {
            let store = try open(encrypted: encrypted)
            try store.put(value, forKey: "k")
        }
        let pattern = try storedPattern(encrypted: encrypted, value: value, key: "k", offset: 140_000)
        #expect(try corruptFile(pattern: pattern) == 1)  // chunk 2

        let store = try open(encrypted: encrypted)
        // Chunks 0 and 1 are fine and are all these reads need.
        let head = try #require(try store.infoAndBytes(forKey: "k", from: 0, maxBytes: 2))
        #expect(head.bytes == Data(value[0..<2]) && head.info.isComplete)
        #expect(
            try store.infoAndBytes(forKey: "k", from: 70_000, maxBytes: 61_000)?.bytes == Data(value[70_000..<131_000]))

        expectCorrupted("k") { _ = try store.infoAndBytes(forKey: "k", from: 131_000, maxBytes: 10_000) }
        #expect(try store.info(forKey: "k") == nil)
        #expect(try store.infoAndBytes(forKey: "k", from: 0, maxBytes: 2) == nil)
        #expect(try store.verify().isClean)
    }
}
