import Dispatch
import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// The queue is an actor: at each `await` other calls run. A call that
/// read the queue's state before an `await` must not act on that stale
/// copy after it. No origin: a performer that runs until cancelled.
@Suite("Download queue reentrancy", .timeLimit(.minutes(1)))
struct DownloadQueueReentrancyTests {
    /// Fetches nothing; runs until its task is cancelled, counting runs started and cancelled.
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
        let started = Locked(0)
        let cancelled = Locked(0)

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
            -> [StoredEntry]
        {
            started.withLock { $0 += 1 }
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            cancelled.withLock { $0 += 1 }
            throw .cancelled
        }
    }

    /// Holds the store's writer lock on a thread of its own until `release` runs.
    final class WriterLockHolder: Sendable {
        private let gate = DispatchSemaphore(value: 0)

        init(_ store: MediaStore) {
            let entered = DispatchSemaphore(value: 0)
            let gate = self.gate
            Thread {
                try? store.performBatch { _ in
                    entered.signal()
                    gate.wait()
                }
            }.start()
            entered.wait()
        }

        func release() { gate.signal() }
    }

    enum UserAction: String, CaseIterable, CustomTestStringConvertible {
        case stop, cancel
        var testDescription: String { rawValue }
    }

    /// A download whose conditions stop holding is marked waiting (its run
    /// stopped) and its entry pinned (a store write). A stop or a cancel
    /// made during that write stands: the pass used to write back the
    /// record it had read before the write, so the stopped or cancelled
    /// download became `waiting`, and ran again once the conditions held.
    @Test("A stop or cancel during a scheduling pass's pin write is not undone", arguments: UserAction.allCases)
    func userActionDuringPinWriteStands(_ action: UserAction) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "reentrancy-\(action.rawValue)"
        // An unpinned entry: halting the download pins it, a write the test can hold.
        _ = try store.prepareEntry(forKey: key, length: 4 * TestCache.chunkSize)
        let monitor = SettableConditionsMonitor(DeviceConditions(isExpensive: false))
        let performer = HangingPerformer()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)), monitor: monitor,
            performers: [performer])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: HangingPerformer.kind,
            conditions: .unmetered)
        await eventually("it runs") { await queue.download(record.id)?.status == .downloading }
        // The pass that started it saves the index last: held before that
        // save lands, the writer lock would hold that pass instead of the next.
        await eventually("the index is saved") {
            // As saved (`load()` would re-queue a running one, as after a relaunch).
            let saved = (try? store.data(forKey: DownloadIndex.key)).flatMap { $0 }
            let records = saved.flatMap { try? JSONDecoder().decode([DownloadRecord].self, from: $0) }
            return records?.first?.status == .downloading
        }

        let holder = WriterLockHolder(store)
        defer { holder.release() }
        // The network turns expensive: the pass halts the download, then waits for the pin write.
        monitor.update { $0.isExpensive = true }
        await eventually("the pass halts the download") { performer.cancelled.current == 1 }
        #expect(await queue.download(record.id)?.status == .waiting([.expensiveNetwork]))
        // The user's call runs while the pass waits (its own store write waits too).
        let user = Task {
            switch action {
            case .stop: try await queue.stop(record.id)
            case .cancel: try await queue.cancel(record.id)
            }
        }
        let expected: DownloadStatus = action == .stop ? .stopped(.user) : .failed(.cancelled)
        await eventually("the user's call is applied") { await queue.download(record.id)?.status == expected }
        holder.release()
        try await user.value
        // The pass resumed right after the pin write, before the user's call returned.
        try await Task.sleep(for: .milliseconds(300))
        #expect(await queue.download(record.id)?.status == expected)
        // Conditions hold again: a stopped or cancelled download stays so.
        monitor.update { $0.isExpensive = false }
        try await Task.sleep(for: .milliseconds(300))
        #expect(await queue.download(record.id)?.status == expected)
        #expect(performer.started.current == 1, "it was started again")
    }

    /// Two `enqueue` calls for one key at once give one download: the
    /// second used to pass the "already held" check while the first waited
    /// for its store read, and the queue held two records of the key (two
    /// performers, and cancelling one unpinned the other's bytes).
    @Test("Concurrent enqueues of one key make one download")
    func concurrentEnqueuesMakeOneDownload() async throws {
        let test = try TestCache()
        let performer = HangingPerformer()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(60)),
            performers: [performer])
        let url = URL(string: "https://example.invalid/twice")!
        let (holding, arrived) = (Locked(false), Locked(0))
        // The queue is kept busy until both calls wait for it; then the
        // first runs to its store read and the second runs meanwhile.
        let busy = Task { await queue.hold(holding) { arrived.current == 2 } }
        await eventually("the queue is held") { holding.current }
        let calls = (0..<2).map { _ in
            Task {
                arrived.withLock { $0 += 1 }
                return try await queue.enqueue(url, kind: HangingPerformer.kind)
            }
        }
        await busy.value
        let first = try await calls[0].value
        let second = try await calls[1].value
        #expect(first.id == second.id)
        #expect(await queue.downloads.count == 1)
        try await queue.cancelAll()
    }
}

extension DownloadQueue {
    /// Sets `holding`, then blocks the queue's executor until `ready` (or
    /// 10 s), then 100 ms more: calls made meanwhile wait for the queue, in order.
    fileprivate func hold(_ holding: Locked<Bool>, until ready: @Sendable () -> Bool) {
        holding.withLock { $0 = true }
        let deadline = Date() + 10
        while !ready() && Date() < deadline { Thread.sleep(forTimeInterval: 0.001) }
        Thread.sleep(forTimeInterval: 0.1)
    }
}
