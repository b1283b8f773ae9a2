import Foundation
import Testing

@testable import MediaStore

/// A streamed entry published together with its holds
/// (`EntryWriter.finish(with:)`), and holds in a batch: one commit for
/// the lot, all or none.
@Suite struct PublishWithHoldsTests {
    let directory = temporaryPath("publish-holds")

    func open() throws -> MediaStore {
        try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16 << 10, initialMapSize: 64 << 20))
    }

    /// Self-describing bytes: byte `i` of value `id` is a function of both.
    static func value(_ id: Int, length: Int) -> Data {
        Data((0..<length).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ (id &* 97) &+ $0 >> 8) })
    }

    struct Refused: Error, Equatable {}

    @Test(arguments: [40, 100_000])
    func aStreamedEntryIsPublishedWithItsHoldInOneCommit(length: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        defer { store.close() }
        let content = Self.value(1, length: length)
        let writer = try store.makeWriter(forKey: "segment")
        try writer.append(content.prefix(length / 3))
        try writer.append(content.dropFirst(length / 3))
        let before = store.environment.lastTransactionID
        var seen: (info: EntryInfo, added: Bool)?
        let info = try writer.finish { batch, info in
            seen = (info, try batch.hold("segment", by: "hls/asset", version: info.version))
        }
        #expect(store.environment.lastTransactionID - before == 1)
        #expect(seen?.info.version == info.version && seen?.added == true)
        #expect(try store.holders(of: "segment") == ["hls/asset"])
        #expect(try store.info(forKey: "segment")?.isPinned == true)
        #expect(try store.data(forKey: "segment") == content)
        #expect(throws: StoreError.writerClosed) { try writer.finish() }
        #expect(try store.verify().isClean)
    }

    @Test(arguments: [40, 100_000])
    func aFinishWhoseBodyThrowsPublishesNothing(length: Int) throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        defer { store.close() }
        let old = Self.value(2, length: 5_000)
        let previous = try store.put(old, forKey: "segment")
        let writer = try store.makeWriter(forKey: "segment")
        try writer.append(Self.value(3, length: length))
        #expect(throws: Refused()) {
            try writer.finish { batch, info in
                try batch.hold("segment", by: "hls/asset", version: info.version)
                throw Refused()
            }
        }
        // The previous version, unheld; the writer is cancelled.
        #expect(try store.info(forKey: "segment")?.version == previous.version)
        #expect(try store.data(forKey: "segment") == old)
        #expect(try store.holders(of: "segment") == [])
        #expect(throws: StoreError.writerClosed) { try writer.append(Data([1])) }
        #expect(try store.verify().isClean)
    }

    @Test func aBatchHoldsAllOrNone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        defer { store.close() }
        let first = try store.put(Self.value(4, length: 3_000), forKey: "a")
        let second = try store.put(Self.value(5, length: 3_000), forKey: "b")
        // The second hold names a version that is not there: neither is held.
        #expect(throws: StoreError.entryReplaced(key: "b", expected: second.version + 1, found: second.version)) {
            try store.performBatch { batch in
                try batch.hold("a", by: "queue/1", version: first.version)
                try batch.hold("b", by: "queue/1", version: second.version + 1)
            }
        }
        #expect(try store.holders(of: "a") == [])
        let before = store.environment.lastTransactionID
        var added: [Bool] = []
        try store.performBatch { batch in
            added = [
                try batch.hold("a", by: "queue/1", version: first.version),
                try batch.hold("b", by: "queue/1", version: second.version),
                try batch.hold("a", by: "queue/1"),
            ]
        }
        #expect(store.environment.lastTransactionID - before == 1)
        #expect(added == [true, true, false])
        #expect(try store.keys(heldBy: "queue/1") == ["a", "b"])
        var released: [Bool] = []
        try store.performBatch { batch in
            released = [
                try batch.release("a", by: "queue/1", version: first.version),
                try batch.release("b", by: "queue/1", version: second.version + 1),
                try batch.release("c", by: "queue/1"),
            ]
        }
        #expect(released == [true, false, false])
        #expect(try store.keys(heldBy: "queue/1") == ["b"])
        #expect(try store.info(forKey: "a")?.isPinned == false)
        #expect(throws: StoreError.invalidHolder("")) {
            try store.performBatch { batch in try batch.hold("a", by: "") }
        }
    }

    @Test func aBatchSetsMetadataExpiryAndHoldsInOneCommitAllOrNone() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        defer { store.close() }
        let content = Self.value(6, length: 40_000)
        let stored = try store.put(
            content, forKey: "a", options: WriteOptions(expiry: .after(3600), metadata: EntryMetadata(mimeType: "x/a")))
        var kept = EntryMetadata(mimeType: "video/mp2t")
        kept.userInfo["asset"] = "one"
        // The hold names a version that is not there: neither the metadata nor the expiry change.
        #expect(throws: StoreError.entryReplaced(key: "a", expected: stored.version + 1, found: stored.version)) {
            try store.performBatch { batch in
                try batch.setMetadata(kept, forKey: "a", version: stored.version)
                try batch.setExpiry(.never, forKey: "a", version: stored.version)
                try batch.hold("a", by: "hls/one", version: stored.version + 1)
            }
        }
        let unchanged = try #require(try store.info(forKey: "a"))
        #expect(unchanged.metadata.mimeType == "x/a" && unchanged.expiry != nil && !unchanged.isPinned)
        #expect(throws: StoreError.notFound(key: "b")) {
            try store.performBatch { batch in try batch.setExpiry(.never, forKey: "b") }
        }
        let before = store.environment.lastTransactionID
        var seen: [EntryInfo?] = []
        try store.performBatch { batch in
            seen = [try batch.info(forKey: "a")]
            try batch.setMetadata(kept, forKey: "a", version: stored.version)
            try batch.setExpiry(.never, forKey: "a", version: stored.version)
            try batch.hold("a", by: "hls/one", version: stored.version)
            let put = try batch.put(Self.value(7, length: 100), forKey: "b")
            // What the batch did so far is seen.
            seen += [try batch.info(forKey: "a"), try batch.info(forKey: "b"), try batch.info(forKey: "c")]
            #expect(seen[2]?.version == put.version)
        }
        #expect(store.environment.lastTransactionID - before == 1)
        #expect(seen.count == 4)
        #expect(seen[0]?.version == stored.version && seen[0]?.metadata.mimeType == "x/a")
        #expect(seen[1]?.metadata == kept && seen[1]?.expiry == nil && seen[1]?.isPinned == true)
        #expect(seen[2]?.length == 100 && seen[3] == nil)
        let info = try #require(try store.info(forKey: "a"))
        #expect(info.version == stored.version && info.metadata == kept && info.expiry == nil)
        #expect(try store.holders(of: "a") == ["hls/one"])
        #expect(try store.data(forKey: "a") == content)
        #expect(try store.verify().isClean)
    }
}
