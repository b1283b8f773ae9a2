import Foundation
import HLSPlaylist
import MediaSupport
import Testing

@testable import MediaHLS
@testable import MediaStore
@testable import MediaStreaming

/// What a download's store writes cost: keeping a resource found in the
/// store, and writing a held playlist, are each one commit (they were
/// three and two), and a segment streamed in many pieces, beyond a store
/// batch, is published byte for byte with its hold in one commit.
@Suite("HLS store commits per resource", .serialized, .timeLimit(.minutes(1)))
struct HLSStoreCommitTests {
    static let holder = "hls/commit-asset"

    /// Self-describing bytes: byte `i` of resource `id` is a function of both.
    static func bytes(_ id: Int, count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ (id &* 97) &+ $0 >> 8) })
    }

    @Test("Keeping a stored resource (metadata, no expiry, hold) is one commit")
    func keepIsOneCommit() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let content = Self.bytes(1, count: 40_000)
        let stored = try store.put(
            content, forKey: "segment",
            options: WriteOptions(expiry: .after(3600), metadata: EntryMetadata(mimeType: "video/mp2t")))
        let resources = HLSResourceStore(cache: test.cache)
        var metadata = EntryMetadata()
        metadata.userInfo["hls.test"] = "kept"
        let before = store.environment.lastTransactionID
        try await resources.keep("segment", metadata: metadata, holder: Self.holder, pinWhile: { true })
        #expect(store.environment.lastTransactionID - before == 1)
        let info = try #require(try store.info(forKey: "segment"))
        #expect(info.version == stored.version)
        #expect(info.expiry == nil, "still expires")
        #expect(info.metadata.userInfo["hls.test"] == "kept")
        #expect(info.metadata.mimeType == "video/mp2t", "the stored MIME type was lost")
        #expect(try store.holders(of: "segment") == [Self.holder])
        #expect(try store.data(forKey: "segment") == content)
    }

    /// A resumed download of an asset it has already kept keeps every
    /// resource again: an entry already kept as asked costs no commit
    /// (one `fdatasync` per resource made such a resume take a third of a
    /// second for a tenth of CPU).
    @Test("Keeping a resource already kept as asked commits nothing")
    func keepingAgainCommitsNothing() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let content = Self.bytes(4, count: 20_000)
        try store.put(
            content, forKey: "segment",
            options: WriteOptions(expiry: .after(3600), metadata: EntryMetadata(mimeType: "video/mp2t")))
        let resources = HLSResourceStore(cache: test.cache)
        var metadata = EntryMetadata()
        metadata.userInfo["hls.test"] = "kept"
        try await resources.keep("segment", metadata: metadata, holder: Self.holder, pinWhile: { true })
        let kept = try #require(try store.info(forKey: "segment"))
        let before = store.environment.lastTransactionID
        try await resources.keep("segment", metadata: metadata, holder: Self.holder, pinWhile: { true })
        #expect(store.environment.lastTransactionID == before, "keeping it again committed")
        #expect(try store.info(forKey: "segment")?.metadata == kept.metadata)
        // Anything not yet as asked is still written: new metadata, another holder.
        metadata.userInfo["hls.test"] = "again"
        try await resources.keep("segment", metadata: metadata, holder: Self.holder, pinWhile: { true })
        #expect(store.environment.lastTransactionID - before == 1)
        #expect(try store.info(forKey: "segment")?.metadata.userInfo["hls.test"] == "again")
        try await resources.keep("segment", metadata: metadata, holder: "hls/another", pinWhile: { true })
        #expect(store.environment.lastTransactionID - before == 2)
        #expect(Set(try store.holders(of: "segment")) == [Self.holder, "hls/another"])
    }

    @Test("A keep whose run stopped before its commit changes nothing")
    func stoppedKeepChangesNothing() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        try store.put(Self.bytes(2, count: 3_000), forKey: "segment", options: WriteOptions(expiry: .after(3600)))
        let resources = HLSResourceStore(cache: test.cache)
        // Live at the first check (in the write queue), stopped at the second (in the transaction).
        let checks = Locked(0)
        let live: @Sendable () -> Bool = {
            checks.withLock { count -> Bool in
                count += 1
                return count == 1
            }
        }
        var metadata = EntryMetadata()
        metadata.userInfo["hls.test"] = "kept"
        let before = store.environment.lastTransactionID
        try await resources.keep("segment", metadata: metadata, holder: Self.holder, pinWhile: live)
        #expect(checks.current == 2)
        #expect(store.environment.lastTransactionID == before, "a stopped keep committed")
        let info = try #require(try store.info(forKey: "segment"))
        #expect(info.expiry != nil && info.metadata.userInfo["hls.test"] == nil)
        #expect(try store.holders(of: "segment").isEmpty)
    }

    @Test("A held playlist is written with its hold in one commit")
    func heldPlaylistIsOneCommit() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let resources = HLSResourceStore(cache: test.cache)
        let playlist = Data("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2.0,\ns0.ts\n#EXT-X-ENDLIST\n".utf8)
        let before = store.environment.lastTransactionID
        try await resources.write(
            playlist, key: "playlist", metadata: EntryMetadata(mimeType: HLSContentType.playlist),
            holder: Self.holder, pinWhile: { true })
        #expect(store.environment.lastTransactionID - before == 1)
        let info = try #require(try store.info(forKey: "playlist"))
        #expect(info.isComplete && info.expiry == nil)
        #expect(info.metadata.mimeType == HLSContentType.playlist)
        #expect(try store.holders(of: "playlist") == [Self.holder])
        #expect(try store.data(forKey: "playlist") == playlist)
    }

    /// A segment of three store batches and a bit, in pieces that do not
    /// divide a batch: the pieces handed on as they pass a batch, the last
    /// ones with the publish.
    @Test("A segment in many pieces, beyond a store batch, is stored byte for byte with its hold")
    func manyPiecesAreStoredExactly() async throws {
        let content = Self.bytes(3, count: 3 * HLSResourceSink.storeBatchBytes + 12_345)
        let origin = FakeOrigin(versions: [FakeOrigin.Version(bytes: content)], pieceSize: 7_001)
        let test = try TestCache(origin: origin)
        let store = try #require(test.store)
        let resources = HLSResourceStore(cache: test.cache)
        let url = URL(string: "https://example.invalid/hls/segment0.ts")!
        let resource = HLSResource(
            kind: .segment, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let (outcome, fetched) = try await resources.obtain(
            resource, metadata: EntryMetadata(), holder: Self.holder, headers: [:], priority: .download,
            store: { _ in true }, pinWhile: { true })
        #expect(fetched)
        guard case .body(.stored(let info)) = outcome else {
            Issue.record("not stored: \(outcome)")
            return
        }
        let key = resource.cacheKey.storeKey
        #expect(info.length == content.count)
        #expect(try store.data(forKey: key) == content)
        #expect(try store.holders(of: key) == [Self.holder])
        #expect(try store.verify().isClean)
    }
}
