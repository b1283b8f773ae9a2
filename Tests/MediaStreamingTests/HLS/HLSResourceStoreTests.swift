import Foundation
import HLSPlaylist
import MediaStore
import Testing

@testable import MediaHLS
@testable import MediaStreaming

/// ``HLSResourceStore/data(for:metadata:pinned:headers:priority:store:)``
/// and what it says it fetched.
@Suite("HLS resource store", .timeLimit(.minutes(1)))
struct HLSResourceStoreTests {
    static let url = URL(string: "https://example.invalid/hls/segment0.ts")!
    static let content = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// The resource was stored (by another caller's fetch, which ended)
    /// between the call's look in the store and its own fetch, which then
    /// found it there. The call said it had fetched it: a download counted
    /// it in `fetchedResources`, and did not keep (pin) the stored entry,
    /// since a fetch of its own would have stored it pinned.
    @Test("Bytes stored just before the fetch began are read from the store, not reported fetched")
    func storedMeanwhileIsNotFetched() async throws {
        let test = try TestCache(origin: FakeOrigin(serving: Self.content))
        let resources = HLSResourceStore(cache: test.cache)
        let resource = HLSResource(
            kind: .segment, url: Self.url, cacheKey: resources.resourceKey(for: Self.url), playlistURL: nil)
        let gate = AsyncGate()
        test.configuration.resourceStoreHooks.storeLook.withLock { $0 = { await gate.pass() } }
        let reading = Task {
            try await resources.data(
                for: resource,
                metadata: HLSEntryMetadata.metadata(
                    for: resource, assetKey: "asset", playlistKey: nil, mimeType: "video/mp2t"),
                pinned: true, priority: .download)
        }
        await gate.arrived()
        try test.store.put(Self.content, forKey: resource.cacheKey.storeKey)
        gate.open()
        let (data, fetched) = try await reading.value
        #expect(data == Self.content)
        #expect(resources.originRequests == 0)
        #expect(!fetched, "read from the store, reported fetched")
    }

    /// A fetch cancelled while it waits to retry a transient failure ends
    /// at once with `cancelled`, asking the origin nothing more.
    @Test("A fetch cancelled in its retry wait stops retrying and reports cancellation")
    func cancelledRetryWaitStops() async throws {
        let test = try TestCache(
            configuration: StreamingConfiguration(
                retryPolicy: RetryPolicy(maxRetries: 5, initialBackoff: .seconds(60), maxBackoff: .seconds(60))),
            origin: FakeOrigin(serving: Self.content, fault: .status(503)))
        let resources = HLSResourceStore(cache: test.cache)
        let resource = HLSResource(
            kind: .segment, url: Self.url, cacheKey: resources.resourceKey(for: Self.url), playlistURL: nil)
        let fetching = Task { try await resources.fetch(resource, priority: .download) }
        await eventually("the first attempt failed") { test.origin.requestCount == 1 }
        let started = ContinuousClock.now
        fetching.cancel()
        let result = await fetching.result
        #expect(ContinuousClock.now - started < .seconds(10), "it waited out the backoff")
        #expect(throws: HLSResourceError.streaming(.cancelled)) { try result.get() }
        #expect(test.origin.requestCount == 1, "retried after the cancellation")
    }
}
