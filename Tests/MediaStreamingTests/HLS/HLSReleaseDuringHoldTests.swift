import Foundation
import HLSPlaylist
import MediaStore
import MediaSupport
import Testing

@testable import MediaHLS
@testable import MediaStreaming

/// `HLSDownloader.release` cancels the asset's downloads and releases its
/// holds at once, on the caller's thread, not on the store's serial write
/// queue: it may land after a download's write checked that its run was
/// live and before that write's hold. The hold must not outlive the
/// release (the entry then stayed held by the released asset, and its
/// `remove` left it in the store).
///
/// The run's liveness check is the seam: the first check answers "live",
/// then the release happens (the run stopped, its holds released), as it
/// would on another thread between the check and the hold.
@Suite("A release between a download's liveness check and its hold wins", .serialized, .timeLimit(.minutes(1)))
struct HLSReleaseDuringHoldTests {
    static let holder = "hls/released-asset"

    /// A run that is live until the first check, then stopped and released
    /// by `release` (the store's `releaseAll(by:)` of the holder).
    final class StoppedAfterFirstCheck: Sendable {
        let checks = Locked(0)
        let store: MediaStore

        init(_ store: MediaStore) { self.store = store }

        var live: @Sendable () -> Bool {
            { [self] in
                let first = checks.withLock { count -> Bool in
                    count += 1
                    return count == 1
                }
                if first { _ = try? store.releaseAll(by: HLSReleaseDuringHoldTests.holder) }
                return first
            }
        }
    }

    @Test("A playlist written while the release happens is not left held")
    func writtenPlaylist() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let resources = HLSResourceStore(cache: test.cache)
        let run = StoppedAfterFirstCheck(store)
        try await resources.write(
            Data("#EXTM3U\n".utf8), key: "playlist", metadata: EntryMetadata(), holder: Self.holder,
            pinWhile: run.live)
        #expect(try store.holders(of: "playlist").isEmpty, "held after the asset was released")
    }

    @Test("A stored resource kept while the release happens is not left held")
    func keptResource() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        try store.put(Data(repeating: 3, count: 100), forKey: "segment")
        let resources = HLSResourceStore(cache: test.cache)
        let run = StoppedAfterFirstCheck(store)
        try await resources.keep("segment", metadata: EntryMetadata(), holder: Self.holder, pinWhile: run.live)
        #expect(try store.holders(of: "segment").isEmpty, "held after the asset was released")
    }

    @Test("Only the released holder's hold goes; another holder's stays")
    func anotherHolderStays() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        try store.put(Data(repeating: 3, count: 100), forKey: "segment")
        try store.hold("segment", by: "hls/other-asset")
        let resources = HLSResourceStore(cache: test.cache)
        let run = StoppedAfterFirstCheck(store)
        try await resources.keep("segment", metadata: EntryMetadata(), holder: Self.holder, pinWhile: run.live)
        #expect(try store.holders(of: "segment") == ["hls/other-asset"])
    }

    /// A segment is published with its hold in one transaction, which
    /// checks the run again: the release came first, so neither is written.
    @Test("A segment fetched and finished while the release happens is neither published nor held")
    func finishedSegment() async throws {
        let origin = try HLSOrigin()
        let test = try TestCache()
        let store = try #require(test.store)
        let resources = HLSResourceStore(cache: test.cache)
        let url = origin.url("ts/segment0.ts")
        let resource = HLSResource(
            kind: .segment, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let run = StoppedAfterFirstCheck(store)
        let (outcome, fetched) = try await resources.obtain(
            resource, metadata: EntryMetadata(), holder: Self.holder, headers: [:], priority: .download,
            store: { _ in true }, pinWhile: run.live)
        #expect(fetched)
        if case .dropped(let bytes) = outcome {
            #expect(bytes > 0)
        } else {
            Issue.record("the segment was kept after the asset was released: \(outcome)")
        }
        #expect(try store.info(forKey: resource.cacheKey.storeKey) == nil)
        #expect(try store.holders(of: resource.cacheKey.storeKey).isEmpty, "held after the asset was released")
        #expect(try store.verify().isClean)
    }
}
