import Foundation
import LoopbackNginx
import Testing

@testable import MediaStore

/// Point 2: streaming a value in through ``EntryWriter``.
@Suite struct StreamingTests {
    /// Appends `value` in pieces of random sizes up to `maxPiece`.
    static func stream(_ value: [UInt8], into writer: EntryWriter, seed: UInt64, maxPiece: Int) throws {
        var generator = SplitMix64(seed: seed)
        var offset = 0
        while offset < value.count {
            let size = Int.random(in: 0...maxPiece, using: &generator)
            let end = min(value.count, offset + size)
            try writer.append(value[offset..<end])
            offset = end
        }
    }

    @Test(arguments: [0, 1, 4_096, 4_097, 261_988, 261_989, 700_001, 9_000_000])
    func randomSizedAppendsEqualPut(size: Int) throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: UInt64(size) + 7)
        let value = generator.bulkBytes(size)
        let writer = try t.store.makeWriter(forKey: "streamed", expectedLength: size)
        try Self.stream(value, into: writer, seed: UInt64(size), maxPiece: max(1, size / 7))
        #expect(writer.bytesWritten == size)
        let streamed = try writer.finish()
        let stats = try t.store.statistics()

        let put = try t.store.put(value, forKey: "put")
        #expect(streamed.isComplete)
        #expect(streamed.length == size)
        #expect(streamed.cachedBytes == size)
        #expect(streamed.contentDigest == put.contentDigest)
        #expect(streamed.chunkCount == put.chunkCount)
        #expect(try t.store.data(forKey: "streamed") == Data(value))
        // The put shares every chunk the writer stored.
        #expect(try t.store.statistics().chunkCount == stats.chunkCount)
        #expect(try t.store.cachedRanges(forKey: "streamed") == (size == 0 ? [] : [0..<size]))

        try t.reopen()
        #expect(try t.store.data(forKey: "streamed") == Data(value))
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    /// The id of the store's last commit, from LMDB's meta pages.
    static func lastCommit(_ t: TestStore) throws -> UInt64 {
        let check = try #require(MetaPageCheck.read(path: t.directory.appendingPathComponent("data.mdb").path))
        return max(check.metas.0?.txnid ?? 0, check.metas.1?.txnid ?? 0)
    }

    /// `finish()` writes the chunks not committed yet and publishes the
    /// entry in one commit: a value smaller than a batch (a media segment)
    /// costs one commit in all, a larger one its full batches and one.
    @Test(arguments: [300_000, 5_000_000])
    func finishCommitsOnce(size: Int) throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: UInt64(size))
        let value = generator.bulkBytes(size)
        let writer = try t.store.makeWriter(forKey: "segment", expectedLength: size)
        try writer.append(value)
        let beforeFinish = try Self.lastCommit(t)
        let info = try writer.finish()
        #expect(try Self.lastCommit(t) == beforeFinish + 1)
        #expect(info.isComplete && info.length == size && info.cachedBytes == size)
        #expect(try t.store.data(forKey: "segment") == Data(value))
        #expect(try t.store.info(forKey: "segment")?.contentDigest == t.store.put(value, forKey: "put").contentDigest)
        // Committed: there after a reopen, and nothing is left staged.
        try t.reopen()
        #expect(try t.store.data(forKey: "segment") == Data(value))
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func readersSeeThePreviousValueUntilFinish() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 21)
        let old = generator.bytes(50_000)
        let new = generator.bulkBytes(9_000_000)
        try t.store.put(old, forKey: "k")
        let writer = try t.store.makeWriter(forKey: "k")
        try writer.append(new[..<8_500_000])  // past one staging commit
        #expect(try t.store.data(forKey: "k") == Data(old))
        #expect(try t.store.info(forKey: "k")?.length == old.count)
        try writer.append(new[8_500_000...])
        try writer.finish()
        #expect(try t.store.data(forKey: "k") == Data(new))
        #expect(try t.store.statistics().entryCount == 1)
        #expect(try t.store.statistics().logicalBytes == new.count)
        #expect(try t.store.verify().isClean)
    }

    @Test func cancelLeavesNothing() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 22)
        let old = generator.bytes(300_000)
        try t.store.put(old, forKey: "k")
        let before = try t.store.statistics()

        let writer = try t.store.makeWriter(forKey: "k")
        try writer.append(generator.bulkBytes(9_000_000))  // commits staged chunks
        #expect(try t.store.statistics().chunkCount > before.chunkCount)
        writer.cancel()
        writer.cancel()  // twice is harmless

        let fresh = try t.store.makeWriter(forKey: "fresh")
        try fresh.append(generator.bulkBytes(9_000_000))
        fresh.cancel()

        let after = try t.store.statistics()
        #expect(after.entryCount == before.entryCount)
        #expect(after.chunkCount == before.chunkCount)
        #expect(after.storedBytes == before.storedBytes)
        #expect(after.logicalBytes == before.logicalBytes)
        #expect(try t.store.data(forKey: "k") == Data(old))
        #expect(try t.store.info(forKey: "fresh") == nil)
        #expect(try stagingCount(t.store) == 0)
        #expect(try t.store.verify().isClean)
    }

    @Test func aDroppedWriterIsCancelled() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 23)
        do {
            let writer = try t.store.makeWriter(forKey: "dropped")
            try writer.append(generator.bulkBytes(9_000_000))
        }
        let stats = try t.store.statistics()
        #expect(stats.chunkCount == 0)
        #expect(stats.storedBytes == 0)
        #expect(try t.store.info(forKey: "dropped") == nil)
        #expect(try stagingCount(t.store) == 0)
    }

    @Test func aClosedWriterRefusesMore() throws {
        let t = try TestStore()
        let writer = try t.store.makeWriter(forKey: "k")
        try writer.append([1, 2, 3])
        try writer.finish()
        #expect(throws: StoreError.writerClosed) { try writer.append([4]) }
        #expect(throws: StoreError.writerClosed) { try writer.finish() }
        #expect(try t.store.data(forKey: "k") == Data([1, 2, 3]))

        let cancelled = try t.store.makeWriter(forKey: "c")
        cancelled.cancel()
        #expect(throws: StoreError.writerClosed) { try cancelled.append([1]) }
        #expect(try t.store.info(forKey: "c") == nil)
    }

    @Test func aWrongExpectedLengthStoresNothing() throws {
        let t = try TestStore()
        var generator = SplitMix64(seed: 24)
        let writer = try t.store.makeWriter(forKey: "k", expectedLength: 1_000_000)
        try writer.append(generator.bytes(999_999))
        #expect(throws: StoreError.lengthMismatch(key: "k", expected: 1_000_000, actual: 999_999)) {
            try writer.finish()
        }
        #expect(try t.store.info(forKey: "k") == nil)
        #expect(try t.store.statistics().chunkCount == 0)
        #expect(try t.store.verify().isClean)
    }

    @Test func anAbandonedWritersStagingIsRemovedAtOpen() throws {
        let t = try TestStore()
        let dead = try deadProcessID()
        try stage(in: t.store, key: "crashed", owner: dead, seed: 25)
        try stage(in: t.store, key: "no-owner", owner: 0, seed: 27)  // kill(0, 0) would hit our own group
        try stage(in: t.store, key: "alive", owner: 1, seed: 26)  // init never dies
        #expect(try stagingCount(t.store) == 3)
        #expect(try t.store.statistics().chunkCount == 6)
        #expect(try t.store.verify().isClean)

        try t.reopen()
        #expect(try stagingCount(t.store) == 1)
        #expect(try t.store.statistics().chunkCount == 2)
        #expect(try t.store.info(forKey: "crashed") == nil)
        #expect(try t.store.info(forKey: "alive") == nil)  // staging is never visible
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    /// A staging record of two raw chunks owned by `owner`, as a writer in
    /// another process leaves it.
    private func stage(in store: MediaStore, key: String, owner: Int32, seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        try withWriteTransaction(store) { transaction in
            var record = transaction.newRecord(key: key, options: WriteOptions(), length: nil)
            record.ownerPID = owner
            for index in 0..<2 {
                let chunk = generator.bytes(store.configuration.chunkSize)
                var compress = false
                try chunk.withUnsafeBytes {
                    try transaction.putPiece($0, entryID: record.entryID, index: index, compress: &compress)
                }
                record.presentChunks += 1
                record.cachedBytes += chunk.count
            }
            try transaction.index.saveStaging(record)
        }
    }

    /// The id of a process that has exited and been reaped.
    private func deadProcessID() throws -> Int32 {
        let process = try ChildProcess("/bin/sh", ["-c", "exit 0"])
        process.waitUntilExit()
        return process.processIdentifier
    }
}

/// Staging records (unfinished streamed writes) in the store.
func stagingCount(_ store: MediaStore) throws -> Int {
    try withReadTransaction(store) { try $0.index.stagingCount() }
}
