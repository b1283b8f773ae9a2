import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Each save of the download index writes the records as the queue had
/// them when the save began. Two saves may reach the store's write queue
/// in the other order (each hops through the concurrency pool before it
/// is queued): the older list must not land last, or the index a relaunch
/// reads lacks the newer change. No origin: performers that run until
/// cancelled.
@Suite("Download queue: index saves in order", .timeLimit(.minutes(1)))
struct DownloadQueueSaveOrderTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("A save overtaken by a newer one does not write its older records over it")
    func overtakenSaveDoesNotLoseTheNewerStatus() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let gate = AsyncGate()
        // Armed: the next save waits at `gate` before its store write; later ones go through.
        let armed = ArmedGate()
        var configuration = DownloadQueueConfiguration(pollInterval: .seconds(3600))
        configuration.indexSaveHook = { await armed.pass() }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: configuration, performers: [HangingPerformer()])
        let first = try await queue.enqueue(
            URL(string: "https://example.invalid/first")!, cacheKey: "first", kind: HangingPerformer.kind)
        let second = try await queue.enqueue(
            URL(string: "https://example.invalid/second")!, cacheKey: "second", kind: HangingPerformer.kind)
        await eventually("both run") { await queue.downloads.allSatisfy { $0.status == .downloading } }

        armed.arm(gate)
        // The first stop's save took its records (the second still downloading) and waits.
        let stopping = Task { try await queue.stop(first.id) }
        await gate.arrived()
        // The second stop's save overtakes it.
        try await queue.stop(second.id)
        gate.open()
        try await stopping.value

        // As a relaunch reads the index.
        let saved = try DownloadIndex(store: store).load()
        let statuses = Dictionary(uniqueKeysWithValues: saved.map { ($0.id, $0.status) })
        #expect(statuses[first.id] == .stopped(.user))
        #expect(statuses[second.id] == .stopped(.user), "the older save landed last: \(statuses)")
        try await queue.cancelAll()
    }
}
