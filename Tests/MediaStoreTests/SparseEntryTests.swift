import Foundation
import Testing

@testable import MediaStore

/// Point 4: sparse entries filled range by range, in any order; and the
/// errors of bad range input.
@Suite struct SparseEntryTests {
    static let chunk = 16_384
    static let configuration = StoreConfiguration(chunkSize: chunk, initialMapSize: 64 << 20)

    @Test func outOfOrderWritesCompleteTheEntry() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 41)
        let length = 4 * c + 100  // 5 chunks, the last one short
        let value = generator.bulkBytes(length)
        let prepared = try t.store.prepareEntry(forKey: "k", length: length)
        let version = prepared.version
        #expect(prepared.length == length)
        #expect(!prepared.isComplete)
        #expect(prepared.cachedBytes == 0)
        #expect(try t.store.cachedRanges(forKey: "k") == [])

        // The middle first, as after a seek.
        let middle = try t.store.write(value[2 * c..<3 * c], at: 2 * c, forKey: "k", version: version)
        #expect(!middle.isComplete)
        #expect(middle.cachedBytes == c)
        #expect(middle.contentDigest == nil)
        #expect(try t.store.cachedRanges(forKey: "k") == [2 * c..<3 * c])
        #expect(try t.store.read(forKey: "k", range: 2 * c + 10..<2 * c + 500) == Data(value[2 * c + 10..<2 * c + 500]))
        #expect(try t.store.data(forKey: "k") == nil)  // partial: a miss for whole reads
        #expect(throws: StoreError.rangeNotCached(key: "k", missing: 0..<c)) {
            try t.store.read(forKey: "k", range: 0..<10)
        }
        #expect(throws: StoreError.rangeNotCached(key: "k", missing: 3 * c..<4 * c)) {
            try t.store.read(forKey: "k", range: 2 * c..<3 * c + 1)
        }

        // The tail (short last chunk), then the next-to-last: ranges merge.
        try t.store.write(value[(4 * c)...], at: 4 * c, forKey: "k", version: version)
        #expect(try t.store.cachedRanges(forKey: "k") == [2 * c..<3 * c, 4 * c..<length])
        try t.store.write(value[3 * c..<4 * c], at: 3 * c, forKey: "k", version: version)
        #expect(try t.store.cachedRanges(forKey: "k") == [2 * c..<length])
        #expect(try t.store.read(forKey: "k", range: 2 * c + 1..<length) == Data(value[2 * c + 1..<length]))

        // Writing a present chunk again changes nothing.
        let before = try t.store.statistics()
        try t.store.write(value[3 * c..<4 * c], at: 3 * c, forKey: "k", version: version)
        #expect(try t.store.statistics().logicalBytes == before.logicalBytes)
        #expect(try t.store.statistics().chunkCount == before.chunkCount)

        // Survives a reopen half-filled.
        try t.reopen()
        #expect(try t.store.cachedRanges(forKey: "k") == [2 * c..<length])
        #expect(try t.store.info(forKey: "k")?.isComplete == false)

        // Two chunks in one write fill the last hole.
        let done = try t.store.write(value[0..<2 * c], at: 0, forKey: "k", version: version)
        #expect(done.isComplete)
        #expect(done.cachedBytes == length)
        #expect(done.chunkCount == 5)
        #expect(done.contentDigest == ContentDigest(of: value))
        #expect(try t.store.cachedRanges(forKey: "k") == [0..<length])
        #expect(try t.store.data(forKey: "k") == Data(value))
        let stats = try t.store.statistics()
        #expect(stats.completeCount == 1)
        #expect(stats.logicalBytes == length)
        #expect(try t.store.verify().isClean)
    }

    @Test func unknownLengthIsFixedByAShortFinalPiece() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 42)
        let value = generator.bulkBytes(2 * c + 50)
        let prepared = try t.store.prepareEntry(forKey: "k", length: nil)
        let version = prepared.version
        #expect(prepared.length == nil)
        try t.store.write(value[c..<2 * c], at: c, forKey: "k", version: version)
        try t.store.write(value[0..<c], at: 0, forKey: "k", version: version)
        let aligned = try t.store.info(forKey: "k")
        #expect(aligned?.length == nil)
        #expect(aligned?.isComplete == false)
        // Aligned reads past the cached part of an unknown-length entry are holes.
        #expect(throws: StoreError.rangeNotCached(key: "k", missing: 2 * c..<3 * c)) {
            try t.store.read(forKey: "k", range: c..<2 * c + 1)
        }

        let done = try t.store.write(value[(2 * c)...], at: 2 * c, forKey: "k", version: version)
        #expect(done.length == value.count)
        #expect(done.isComplete)
        #expect(done.contentDigest == ContentDigest(of: value))
        #expect(try t.store.data(forKey: "k") == Data(value))
        // Now known: a write past the end is refused.
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: value.count, actual: 3 * c + 10)) {
            try t.store.write([UInt8](repeating: 1, count: 10), at: 3 * c, forKey: "k", version: version)
        }
        #expect(try t.store.verify().isClean)
    }

    @Test func aShortPieceBeforeAPresentChunkIsALengthMismatch() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let version = try t.store.prepareEntry(forKey: "k", length: nil).version
        try t.store.write([UInt8](repeating: 2, count: c), at: 2 * c, forKey: "k", version: version)
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: 3 * c, actual: c + 5)) {
            try t.store.write([UInt8](repeating: 1, count: 5), at: c, forKey: "k", version: version)
        }
        #expect(try t.store.info(forKey: "k")?.length == nil)
    }

    @Test func learningTheLengthLaterCompletesTheEntry() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 43)
        let value = generator.bulkBytes(2 * c)
        let version = try t.store.prepareEntry(forKey: "k", length: nil).version
        try t.store.write(value, at: 0, forKey: "k", version: version)
        #expect(try t.store.info(forKey: "k")?.isComplete == false)
        let known = try t.store.prepareEntry(forKey: "k", length: 2 * c)
        #expect(known.isComplete)
        #expect(known.contentDigest == ContentDigest(of: value))
        #expect(try t.store.data(forKey: "k") == Data(value))
    }

    @Test func prepareKeepsAnAgreeingEntryAndReplacesAConflictingOne() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let first = try t.store.prepareEntry(forKey: "k", length: 3 * c).version
        try t.store.write([UInt8](repeating: 7, count: c), at: c, forKey: "k", version: first)
        #expect(try t.store.prepareEntry(forKey: "k", length: 3 * c).version == first)
        #expect(try t.store.cachedRanges(forKey: "k") == [c..<2 * c])
        #expect(try t.store.prepareEntry(forKey: "k", length: nil).version == first)
        #expect(try t.store.cachedRanges(forKey: "k") == [c..<2 * c])
        let replaced = try t.store.prepareEntry(forKey: "k", length: 5 * c)
        #expect(replaced.version != first)
        #expect(try t.store.cachedRanges(forKey: "k") == [])
        #expect(try t.store.info(forKey: "k")?.length == 5 * c)
        #expect(try t.store.statistics().entryCount == 1)
        #expect(try t.store.statistics().chunkCount == 0)
        #expect(try t.store.verify().isClean)
    }

    @Test func misalignedWritesAreRefused() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        let length = 3 * c + 10
        let version = try t.store.prepareEntry(forKey: "k", length: length).version
        let bytes = [UInt8](repeating: 3, count: c)
        #expect(throws: StoreError.misalignedWrite(key: "k", offset: 10, count: c, chunkSize: c)) {
            try t.store.write(bytes, at: 10, forKey: "k", version: version)
        }
        // Mid-chunk where no short chunk ends.
        #expect(throws: StoreError.misalignedWrite(key: "k", offset: c + 5, count: c, chunkSize: c)) {
            try t.store.write(bytes, at: c + 5, forKey: "k", version: version)
        }
        #expect(throws: StoreError.misalignedWrite(key: "k", offset: -c, count: c, chunkSize: c)) {
            try t.store.write(bytes, at: -c, forKey: "k", version: version)
        }
        // Past the known length.
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: length, actual: 3 * c + 11)) {
            try t.store.write([UInt8](repeating: 1, count: 11), at: 3 * c, forKey: "k", version: version)
        }
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: length, actual: 5 * c)) {
            try t.store.write(bytes, at: 4 * c, forKey: "k", version: version)
        }
        // Nothing was stored by the refused writes.
        #expect(try t.store.cachedRanges(forKey: "k") == [])
        #expect(try t.store.statistics().chunkCount == 0)
        // The short tail at the exact end is fine.
        try t.store.write([UInt8](repeating: 1, count: 10), at: 3 * c, forKey: "k", version: version)
        #expect(try t.store.cachedRanges(forKey: "k") == [3 * c..<length])
    }

    @Test func writingToAMissingKeyIsEntryReplaced() throws {
        let t = try TestStore(configuration: Self.configuration)
        #expect(throws: StoreError.entryReplaced(key: "nope", expected: 1, found: nil)) {
            try t.store.write([1, 2, 3], at: 0, forKey: "nope", version: 1)
        }
        #expect(try t.store.info(forKey: "nope") == nil)
        #expect(try t.store.cachedRanges(forKey: "nope") == [])
        #expect(throws: StoreError.notFound(key: "nope")) {
            try t.store.read(forKey: "nope", range: 0..<1)
        }
    }

    @Test func badRangesAreInvalid() throws {
        let t = try TestStore(configuration: Self.configuration)
        var generator = SplitMix64(seed: 44)
        let value = generator.bulkBytes(3 * Self.chunk)
        try t.store.put(value, forKey: "k")
        try t.store.put([1, 2, 3], forKey: "inline")
        let n = value.count
        #expect(throws: StoreError.invalidRange(key: "k", range: -1..<5, length: n)) {
            try t.store.read(forKey: "k", range: -1..<5)
        }
        #expect(throws: StoreError.invalidRange(key: "k", range: 0..<n + 1, length: n)) {
            try t.store.read(forKey: "k", range: 0..<n + 1)
        }
        #expect(throws: StoreError.invalidRange(key: "k", range: n + 5..<n + 10, length: n)) {
            try t.store.read(forKey: "k", range: n + 5..<n + 10)
        }
        #expect(throws: StoreError.invalidRange(key: "inline", range: 2..<4, length: 3)) {
            try t.store.read(forKey: "inline", range: 2..<4)
        }
        #expect(throws: StoreError.invalidRange(key: "p", range: 0..<0, length: -1)) {
            try t.store.prepareEntry(forKey: "p", length: -1)
        }
        #expect(try t.store.info(forKey: "p") == nil)
        // Valid reads at the edges.
        #expect(try t.store.read(forKey: "k", range: n - 1..<n) == Data(value[(n - 1)...]))
        #expect(try t.store.read(forKey: "inline", range: 1..<3) == Data([2, 3]))
    }

    @Test func streamedRangeReadsGoChunkByChunk() throws {
        let t = try TestStore(configuration: Self.configuration)
        let c = Self.chunk
        var generator = SplitMix64(seed: 45)
        let value = generator.bulkBytes(3 * c + 7)
        try t.store.put(value, forKey: "k")
        var pieces: [Data] = []
        try t.store.read(forKey: "k", range: 100..<3 * c + 5) { pieces.append($0) }
        #expect(pieces.map(\.count) == [c - 100, c, c, 5])
        #expect(pieces.reduce(Data(), +) == Data(value[100..<3 * c + 5]))
    }
}

/// A chunk-by-chunk read never mixes two versions of an entry.
@Suite struct ChunkedReadConsistencyTests {
    /// Replaced while the first transaction's chunks are handed out: they
    /// all come (one snapshot, the old version), then the read stops.
    @Test func replacingTheEntryMidStreamStopsTheRead() throws {
        let chunk = 4096
        let perTransaction = MediaStore.sliceBytesPerTransaction / chunk
        let length = 3 * perTransaction * chunk
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 64 << 20))
        try t.store.put([UInt8](repeating: 1, count: length), forKey: "k")
        var received: [Data] = []
        #expect(throws: StoreError.changedDuringRead(key: "k")) {
            try t.store.read(forKey: "k", range: 0..<length) { data in
                received.append(data)
                if received.count == 1 { try t.store.put([UInt8](repeating: 2, count: length), forKey: "k") }
            }
        }
        #expect(received.count == perTransaction)
        #expect(received.allSatisfy { $0.count == chunk && $0.allSatisfy { $0 == 1 } })
    }

    /// A read starting inside a chunk: its first transaction still copies
    /// at most `sliceBytesPerTransaction` bytes (the partial chunk and
    /// the whole ones that fit), all from the old version.
    @Test func aTransactionNeverCopiesMoreThanItsShare() throws {
        let chunk = 4096
        let limit = MediaStore.sliceBytesPerTransaction
        let start = 100
        let length = 3 * limit
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 64 << 20))
        try t.store.put([UInt8](repeating: 1, count: length), forKey: "k")
        var received: [Data] = []
        #expect(throws: StoreError.changedDuringRead(key: "k")) {
            try t.store.read(forKey: "k", range: start..<length) { data in
                received.append(data)
                if received.count == 1 { try t.store.put([UInt8](repeating: 2, count: length), forKey: "k") }
            }
        }
        let wholeChunks = (limit - (chunk - start)) / chunk
        #expect(received.count == 1 + wholeChunks)
        #expect(received.reduce(0) { $0 + $1.count } <= limit)
        #expect(received.allSatisfy { $0.allSatisfy { $0 == 1 } })
    }

    /// A hole still there when the read reaches it: what came before is
    /// handed out, then the read stops with the hole.
    @Test func aHoleStopsTheReadAfterTheBytesBeforeIt() throws {
        let chunk = 4096
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20))
        let version = try t.store.prepareEntry(forKey: "k", length: 3 * chunk).version
        try t.store.write([UInt8](repeating: 1, count: chunk), at: 0, forKey: "k", version: version)
        try t.store.write([UInt8](repeating: 3, count: chunk), at: 2 * chunk, forKey: "k", version: version)
        var received: [Data] = []
        #expect(throws: StoreError.self) {
            try t.store.read(forKey: "k", range: 100..<(3 * chunk)) { received.append($0) }
        }
        #expect(received == [Data([UInt8](repeating: 1, count: chunk - 100))])
        do {
            try t.store.read(forKey: "k", range: 100..<(3 * chunk)) { _ in }
        } catch StoreError.rangeNotCached(_, let missing) {
            #expect(missing.lowerBound == chunk)
        }
    }

    @Test func fillingHolesMidStreamIsFine() throws {
        let chunk = 4096
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20))
        let version = try t.store.prepareEntry(forKey: "k", length: 2 * chunk).version
        try t.store.write([UInt8](repeating: 1, count: chunk), at: 0, forKey: "k", version: version)
        var received = Data()
        try t.store.read(forKey: "k", range: 0..<(2 * chunk)) { data in
            if received.isEmpty {
                try t.store.write([UInt8](repeating: 2, count: chunk), at: chunk, forKey: "k", version: version)
            }
            received.append(data)
        }
        #expect(received == Data([UInt8](repeating: 1, count: chunk) + [UInt8](repeating: 2, count: chunk)))
    }
}

extension ChunkedReadConsistencyTests {
    @Test func aVersionFromInfoPinsTheReadToThatVersion() throws {
        let chunk = 4096
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20))
        try t.store.put([UInt8](repeating: 1, count: 2 * chunk), forKey: "k")
        let info = try #require(try t.store.info(forKey: "k"))
        try t.store.put([UInt8](repeating: 2, count: 3 * chunk), forKey: "k")
        #expect(throws: StoreError.changedDuringRead(key: "k")) {
            try t.store.read(forKey: "k", range: 0..<(2 * chunk), version: info.version) { _ in }
        }
        let current = try #require(try t.store.info(forKey: "k"))
        #expect(current.version != info.version)
        var bytes = Data()
        try t.store.read(forKey: "k", range: 0..<(3 * chunk), version: current.version) { bytes.append($0) }
        #expect(bytes == Data([UInt8](repeating: 2, count: 3 * chunk)))
    }
}
