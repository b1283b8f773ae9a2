import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A cancel releases the download's holds in a store write of its own;
/// a resume holds them again in another. The two writes may reach the
/// store's write queue in either order (each hops through the
/// concurrency pool first, and the queue lets the resume in while the
/// cancel waits): the download's status when a write lands decides, so a
/// resumed download keeps its entries held. No origin: a performer that
/// runs until cancelled.
@Suite("Download queue: a cancel's release and a resume's hold", .timeLimit(.minutes(1)))
struct DownloadQueueCancelResumeHoldTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("A release that lands after the resume's hold leaves the resumed download's entry held")
    func lateReleaseKeepsTheResumedHold() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "cancel-resume"
        try store.put(Data(repeating: 3, count: 2 * TestCache.chunkSize), forKey: key)
        let gate = AsyncGate()
        // Armed: the next release waits at `gate` before its store write; later ones go through.
        let armed = ArmedGate()
        var configuration = DownloadQueueConfiguration(pollInterval: .seconds(3600))
        configuration.holdsReleaseHook = { await armed.pass() }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [HangingPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: HangingPerformer.kind)
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: key) == [holder])

        armed.arm(gate)
        // The cancel's release waits; the resume holds meanwhile (still held: nothing to add).
        let cancelling = Task { try await queue.cancel(record.id) }
        await gate.arrived()
        try await queue.resume(record.id)
        gate.open()
        try await cancelling.value

        #expect(await queue.download(record.id)?.status.isActive == true)
        #expect(try store.holders(of: key) == [holder], "the resumed download's entry was released")
        try await queue.cancelAll()
        #expect(try store.holders(of: key).isEmpty)
    }
}
