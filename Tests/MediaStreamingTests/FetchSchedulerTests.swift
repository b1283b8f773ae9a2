import Foundation
import MediaStreaming
import Testing

/// The fetch scheduler alone, with tasks standing in for transfers.
@Suite("Fetch scheduler", .timeLimit(.minutes(1)))
struct FetchSchedulerTests {
    @Test func connectionsPerHostAreLimitedAndOtherHostsAreNot() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 2)
        let first = try await scheduler.admit(.download, host: "a")
        _ = try await scheduler.admit(.download, host: "a")
        let third = Task { try await scheduler.admit(.download, host: "a") }
        await eventually("the third waits") { scheduler.snapshot.waitingForConnection[.download] == 1 }
        let other = try await scheduler.admit(.download, host: "b")
        #expect(other.host == "b")
        scheduler.finish(first)
        let admitted = try await third.value
        #expect(admitted.host == "a")
        #expect(scheduler.snapshot.waitingForConnection.isEmpty)
        #expect(scheduler.snapshot.busy[.download] == 3)
    }

    @Test func higherPrioritiesAreAdmittedFirstThenArrivalOrder() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 1)
        // A holder no waiter outranks (a lower one would be preempted).
        let holder = try await scheduler.admit(.preload, host: "a")
        let order = OrderLog()
        let download = Task {
            let ticket = try await scheduler.admit(.download, host: "a")
            order.append("download")
            scheduler.finish(ticket)
        }
        await eventually("a download waits") { scheduler.snapshot.waitingForConnection[.download] == 1 }
        let preload = Task {
            let ticket = try await scheduler.admit(.preload, host: "a")
            order.append("preload")
            try await Task.sleep(for: .milliseconds(50))
            scheduler.finish(ticket)
        }
        await eventually("a preload waits") { scheduler.snapshot.waitingForConnection[.preload] == 1 }
        scheduler.finish(holder)
        try await preload.value
        try await download.value
        #expect(order.entries == ["preload", "download"])
    }

    @Test func lowerPrioritiesPauseAtCheckpointsWhilePlaybackIsBusy() async throws {
        let scheduler = FetchScheduler()
        let download = try await scheduler.admit(.download, host: "a")
        try await scheduler.checkpoint(download)  // nothing outranks it: at once
        let playback = try await scheduler.admit(.playback, host: "a")
        let passed = OrderLog()
        let waiting = Task {
            try await scheduler.checkpoint(download)
            passed.append("download")
        }
        await eventually("the download pauses") { scheduler.snapshot.paused[.download] == 1 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(passed.entries.isEmpty, "a download must not pass a checkpoint while playback is busy")
        scheduler.finish(playback)
        try await waiting.value
        #expect(passed.entries == ["download"])
    }

    @Test func anIdlePlayerBlocksNothing() async throws {
        let scheduler = FetchScheduler()
        let preload = try await scheduler.admit(.preload, host: "a")
        let playback = try await scheduler.admit(.playback, host: "b")
        let paused = Task { try await scheduler.checkpoint(preload) }
        await eventually("the preload pauses") { scheduler.snapshot.paused[.preload] == 1 }
        scheduler.setIdle(true, for: playback)  // the player paused; its reader holds the transfer
        try await paused.value
        try await scheduler.checkpoint(preload)  // still idle: at once
        scheduler.setIdle(false, for: playback)
        let again = Task { try await scheduler.checkpoint(preload) }
        await eventually("busy playback pauses it again") { scheduler.snapshot.paused[.preload] == 1 }
        scheduler.finish(playback)
        try await again.value
    }

    @Test func playbackNeverWaitsForAConnectionItPreemptsTheLowest() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 2)
        let preload = try await scheduler.admit(.preload, host: "a")
        let download = try await scheduler.admit(.download, host: "a")
        _ = try await scheduler.admit(.playback, host: "b")  // busy playback elsewhere pauses the download
        let checkpoint = Task { () -> FetchSchedulerError? in
            do throws(FetchSchedulerError) {
                try await scheduler.checkpoint(download)
                return nil
            } catch { return error }
        }
        await eventually("the download pauses") { scheduler.snapshot.paused[.download] == 1 }
        _ = try await scheduler.admit(.playback, host: "a")  // host a is full: must not wait
        #expect(await checkpoint.value == .preempted, "the lowest priority on the host gives its connection up")
        await #expect(throws: FetchSchedulerError.preempted) { try await scheduler.checkpoint(download) }
        scheduler.finish(download)
        // The preload kept its connection; it pauses behind busy playback.
        #expect(scheduler.snapshot.busy[.preload] == 1)
        scheduler.finish(preload)
    }

    @Test func cancelledWaitersLeave() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 1)
        let holder = try await scheduler.admit(.download, host: "a")
        let waiting = Task { try await scheduler.admit(.download, host: "a") }
        await eventually("it waits") { scheduler.snapshot.waitingForConnection[.download] == 1 }
        waiting.cancel()
        await #expect(throws: FetchSchedulerError.cancelled) { try await waiting.value }
        #expect(scheduler.snapshot.waitingForConnection.isEmpty)
        let playback = try await scheduler.admit(.playback, host: "b")
        let checkpoint = Task { try await scheduler.checkpoint(holder) }
        await eventually("it pauses") { scheduler.snapshot.paused[.download] == 1 }
        checkpoint.cancel()
        await #expect(throws: FetchSchedulerError.cancelled) { try await checkpoint.value }
        scheduler.finish(playback)
        scheduler.finish(holder)
        #expect(scheduler.snapshot == FetchScheduler.Snapshot())
    }

    /// Many transfers of every priority on three hosts, with checkpoints
    /// and preemptions: every one ends (no lost wake-up, no deadlock) and
    /// the scheduler is empty afterwards. The rules themselves are checked
    /// deterministically by the tests above.
    @Test func manyTransfersAllFinish() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 2)
        let ledger = Ledger()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<60 {
                group.addTask {
                    let priority = FetchPriority.allCases[index % 3]
                    let ticket = try await scheduler.admit(priority, host: ["a", "b", "c"][(index / 3) % 3])
                    defer {
                        ledger.finish()
                        scheduler.finish(ticket)
                    }
                    for _ in 0..<5 {
                        do throws(FetchSchedulerError) {
                            try await scheduler.checkpoint(ticket)
                        } catch {
                            #expect(error == .preempted)
                            ledger.preempted()
                            return
                        }
                        try await Task.sleep(for: .microseconds(200))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(ledger.finished == 60)
        #expect(ledger.preemptions > 0, "the premise: playback had to preempt some transfers")
        #expect(scheduler.snapshot == FetchScheduler.Snapshot())
    }

    @Test func aPreloadWaitingForAConnectionPreemptsADownloadButNotAPreload() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 1)
        let download = try await scheduler.admit(.download, host: "a")
        #expect(!scheduler.isOutranked(download))
        let preload = try await scheduler.admit(.preload, host: "a")  // at once: the download gives way
        #expect(scheduler.isOutranked(download))
        await #expect(throws: FetchSchedulerError.preempted) { try await scheduler.checkpoint(download) }
        scheduler.finish(download)
        let second = Task { try await scheduler.admit(.preload, host: "a") }
        await eventually("an equal priority waits") { scheduler.snapshot.waitingForConnection[.preload] == 1 }
        #expect(!scheduler.isOutranked(preload))
        scheduler.finish(preload)
        scheduler.finish(try await second.value)
        #expect(scheduler.snapshot == FetchScheduler.Snapshot())
    }

    @Test func aPriorityRaisedWhileWaitingOrRunningCounts() async throws {
        let scheduler = FetchScheduler(connectionsPerHost: 1)
        let holder = try await scheduler.admit(.preload, host: "a")
        let waiting = scheduler.makeTicket(.download, host: "a")
        let admission = Task { try await scheduler.admit(waiting) }
        await eventually("the download waits") { scheduler.snapshot.waitingForConnection[.download] == 1 }
        // A player joined it: as playback it takes the connection at once.
        scheduler.setPriority(.playback, for: waiting)
        try await admission.value
        #expect(scheduler.isOutranked(holder))
        #expect(scheduler.snapshot.busy[.playback] == 1)
        // The player left: back to a download, outranked by the preload again.
        scheduler.setPriority(.download, for: waiting)
        scheduler.finish(holder)
        let other = try await scheduler.admit(.preload, host: "b")
        #expect(scheduler.isOutranked(waiting))
        scheduler.finish(other)
        #expect(!scheduler.isOutranked(waiting))
        scheduler.finish(waiting)
    }
}

/// What tasks did, in order.
final class OrderLog: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ entry: String) { lock.withLock { items.append(entry) } }
    var entries: [String] { lock.withLock { items } }
}

/// Counts of what the stress test's transfers went through.
final class Ledger: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var counts = (finished: 0, preempted: 0)
    func finish() { lock.withLock { counts.finished += 1 } }
    func preempted() { lock.withLock { counts.preempted += 1 } }
    var finished: Int { lock.withLock { counts.finished } }
    var preemptions: Int { lock.withLock { counts.preempted } }
}
