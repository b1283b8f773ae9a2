import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaStreaming

/// A pin the queue asks for (a stop, or a scheduling pass halting a
/// download whose conditions stopped holding) reads the download's keys
/// first, then writes; a cancel can run in between (the queue is an actor:
/// other calls run at each `await`). The cancel released the pins, then
/// the late pin landed: a cancelled download's entry stayed pinned, the
/// queue's own pin, until the record was removed. The performer's keys
/// are where the test holds the pin: no timing involved.
@Suite("Download queue: a pin asked before a cancel never lands after it", .timeLimit(.minutes(1)))
struct DownloadQueueCancelPinRaceTests {
    /// Runs until stopped; the first ``keys(of:in:)`` after ``gate`` is set
    /// is held there until the test opens the gate.
    struct GatedKeysPerformer: UntilCancelledPerformer {
        static let kind = "gated-keys"
        let gate = Locked<BlockingGate?>(nil)

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
            // One call is held (on the store's read queue, a thread of its own); later ones go through.
            gate.withLock { gate in
                defer { gate = nil }
                return gate
            }?.pass()
            return [record.cacheKey]
        }
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
        let performer = GatedKeysPerformer()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)), monitor: monitor,
            performers: [performer])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: GatedKeysPerformer.kind,
            conditions: .unmetered)
        #expect(await queue.download(record.id)?.status == .downloading)
        #expect(try store.info(forKey: key)?.isPinned == false)

        // The pin reads the keys and is held there.
        let gate = BlockingGate()
        performer.gate.withLock { $0 = gate }
        let pinning: Task<Void, any Error>
        switch pinBy {
        case .stop:
            pinning = Task { try await queue.stop(record.id) }
        case .conditionsUnmet:
            monitor.conditions.withLock { $0.isExpensive = true }
            pinning = Task { await queue.schedule() }
        }
        await gate.arrived()

        // The cancel runs meanwhile, and releases the pins (none is set yet).
        switch cancelBy {
        case .cancel: try await queue.cancel(record.id)
        case .cancelAll: try await queue.cancelAll()
        }
        #expect(await queue.download(record.id)?.status == .failed(.userCancelled))
        #expect(try store.info(forKey: key)?.isPinned == false)

        // The held pin goes on: it must not pin a cancelled download's entry.
        gate.open()
        try await pinning.value
        #expect(await queue.download(record.id)?.status == .failed(.userCancelled))
        #expect(try store.info(forKey: key)?.isPinned == false, "the cancelled download's entry stayed pinned")
        #expect(test.origin.requests.isEmpty)
    }

    /// A resume right after a cancel notes which of the download's entries
    /// are pinned by someone else (the queue's own pins are released by
    /// then). It read them while the cancel's unpin was still to be
    /// written: the queue's own pin looked like someone else's, the cancel
    /// then left it (not its own, by the note), and so did every later
    /// cancel or remove.
    @Test("A resume during a cancel's release does not take the queue's pin for someone else's")
    func resumeDuringCancelRelease() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "cancel-resume-race"
        try store.put(Data(repeating: 9, count: 2 * TestCache.chunkSize), forKey: key)
        let performer = GatedKeysPerformer()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            monitor: QuietMonitor(), performers: [performer])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: GatedKeysPerformer.kind)
        try await queue.stop(record.id)
        #expect(try store.info(forKey: key)?.isPinned == true, "the queue pins a stopped download's bytes")

        // The cancel's release reads the keys and is held there.
        let gate = BlockingGate()
        performer.gate.withLock { $0 = gate }
        let cancelling = Task { try await queue.cancel(record.id) }
        await gate.arrived()
        // The resume runs meanwhile; it must not take its note before the release is written.
        let resuming = Task { try await queue.resume(record.id) }
        // Resumed (it took its note) or still waiting for the release after 2 s.
        for _ in 0..<200 where await queue.download(record.id)?.status == .failed(.userCancelled) {
            try await Task.sleep(for: .milliseconds(10))
        }
        gate.open()
        try await cancelling.value
        try await resuming.value
        #expect(await queue.download(record.id)?.status == .downloading)

        // Now the queue's pin again; the next cancel releases it.
        try await queue.stop(record.id)
        #expect(try store.info(forKey: key)?.isPinned == true)
        try await queue.cancel(record.id)
        #expect(try store.info(forKey: key)?.isPinned == false, "the queue's own pin was taken for someone else's")
    }
}
