import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A hold the queue asks for (a stop, or a scheduling pass halting a
/// download whose conditions stopped holding) reads the download's keys
/// first, then writes; a cancel can run in between (the queue is an actor:
/// other calls run at each `await`). The late hold must not land after
/// the cancel's release: a cancelled download's entry would stay held by
/// it until the record was removed. The queue's `holdHook` is where the
/// test holds the hold: no timing involved, and no thread blocked.
@Suite("Download queue: a hold asked before a cancel never lands after it", .timeLimit(.minutes(1)))
struct DownloadQueueCancelPinRaceTests {
    /// Runs until stopped.
    struct GatedKeysPerformer: UntilCancelledPerformer {
        static let kind = "gated-keys"
    }

    /// The queue's configuration whose first hold after `armed` is set
    /// waits at that gate (before it asks the download's keys); later ones go through.
    static func configuration(_ armed: Locked<AsyncGate?>) -> DownloadQueueConfiguration {
        var configuration = DownloadQueueConfiguration(pollInterval: .seconds(60))
        configuration.holdHook = {
            await armed.withLock { gate in
                defer { gate = nil }
                return gate
            }?.pass()
        }
        return configuration
    }

    /// The device's state as the test sets it, with no change reported: a
    /// scheduling pass runs only when the test calls one (and waits for it).
    final class QuietMonitor: ConditionsMonitor {
        let conditions = Locked(DeviceConditions(isExpensive: false))
        var current: DeviceConditions { conditions.current }
        func updates() -> AsyncStream<DeviceConditions> { AsyncStream { _ in } }
    }

    enum PinBy: String, CaseIterable, CustomTestStringConvertible {
        /// The user stops the download: its bytes are pinned.
        case stop
        /// The network turns expensive: the scheduling pass halts the download and pins its bytes.
        case conditionsUnmet
        var testDescription: String { rawValue }
    }

    enum CancelBy: String, CaseIterable, CustomTestStringConvertible {
        case cancel, cancelAll
        var testDescription: String { rawValue }
    }

    @Test(
        "A cancel while a pin's keys are read leaves the entry unpinned", arguments: PinBy.allCases, CancelBy.allCases)
    func cancelDuringPinLeavesNoPin(_ pinBy: PinBy, cancelBy: CancelBy) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "cancel-pin-race-\(pinBy.rawValue)-\(cancelBy.rawValue)"
        try store.put(Data(repeating: 7, count: 2 * TestCache.chunkSize), forKey: key)
        let monitor = QuietMonitor()
        let armed = Locked<AsyncGate?>(nil)
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: Self.configuration(armed), monitor: monitor,
            performers: [GatedKeysPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: GatedKeysPerformer.kind,
            conditions: .unmetered)
        #expect(await queue.download(record.id)?.status == .downloading)
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: key) == [holder], "a download holds its stored entry from its enqueue")

        // The hold is held before it reads the keys.
        let gate = AsyncGate()
        defer { gate.open() }
        armed.withLock { $0 = gate }
        let pinning: Task<Void, any Error>
        switch pinBy {
        case .stop:
            pinning = Task { try await queue.stop(record.id) }
        case .conditionsUnmet:
            monitor.conditions.withLock { $0.isExpensive = true }
            pinning = Task { await queue.schedule() }
        }
        await gate.arrived()

        // The cancel runs meanwhile, and releases the holds.
        switch cancelBy {
        case .cancel: try await queue.cancel(record.id)
        case .cancelAll: try await queue.cancelAll()
        }
        #expect(await queue.download(record.id)?.status == .failed(.cancelled))
        #expect(try store.info(forKey: key)?.isPinned == false)

        // The held pin goes on: it must not pin a cancelled download's entry.
        gate.open()
        try await pinning.value
        #expect(await queue.download(record.id)?.status == .failed(.cancelled))
        #expect(try store.holders(of: key).isEmpty, "the cancelled download's entry stayed held")
        #expect(test.origin.requests.isEmpty)
    }

    /// A resume that runs while a cancel's release is being written holds
    /// the entry again (it is the download's once more), and the next
    /// cancel releases it: nobody else's hold is made up on the way.
    @Test("A resume during a cancel's release holds again, and the next cancel releases")
    func resumeDuringCancelRelease() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "cancel-resume-race"
        try store.put(Data(repeating: 9, count: 2 * TestCache.chunkSize), forKey: key)
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            monitor: QuietMonitor(), performers: [GatedKeysPerformer()])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: GatedKeysPerformer.kind)
        try await queue.stop(record.id)
        let holder = DownloadQueue.holder(of: record.id)
        #expect(try store.holders(of: key) == [holder], "the queue holds a stopped download's bytes")

        // The resume is let in at the cancel's first `await` (its release).
        let cancelling = Task { try await queue.cancel(record.id) }
        let resuming = Task {
            while await queue.download(record.id)?.status != .failed(.cancelled) { await Task.yield() }
            try await queue.resume(record.id)
        }
        try await cancelling.value
        try await resuming.value
        #expect(await queue.download(record.id)?.status == .downloading)

        try await queue.stop(record.id)
        #expect(try store.holders(of: key) == [holder])
        try await queue.cancel(record.id)
        #expect(try store.holders(of: key).isEmpty, "the cancel left the download's hold")
    }
}
