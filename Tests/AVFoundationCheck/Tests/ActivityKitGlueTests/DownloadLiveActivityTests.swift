@_spi(StandIn) import ActivityKit
import Foundation
import MediaDownloads
import MediaDownloadsActivityKitGlue
import MediaStore
import MediaStreaming
import Testing

/// The ActivityKit glue (DownloadLiveActivity) against the stand-in of
/// ActivityKit: one activity requested, updated, ended with the final
/// state, adopted after a relaunch, refused; cancel-all through a real
/// queue. Serialized: the stand-in's list of activities is the process's.
@Suite("Download Live Activity glue", .serialized, .timeLimit(.minutes(1)))
@MainActor
final class DownloadLiveActivityTests {
    typealias Call = StandInActivityCall<DownloadActivityState>

    /// Fetches nothing: runs until cancelled.
    struct HangingPerformer: DownloadPerformer {
        let kind = "hanging"

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
            throw .cancelled
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
    }

    let attributes = DownloadActivityAttributes(
        name: "Downloads", cancelAllURL: URL(string: "example-app://downloads/cancel-all")!)

    /// The stores' folders, removed with the test.
    private var directories: [URL] = []

    init() { Activity<DownloadActivityAttributes>.standInReset() }

    deinit { for directory in directories { try? FileManager.default.removeItem(at: directory) } }

    /// A queue over a store of its own.
    func openQueue() async throws -> DownloadQueue {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("activity-\(UUID().uuidString)")
        directories.append(directory)
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16 * 1024, initialMapSize: 16 << 20))
        return try await DownloadQueue.open(cache: StreamingCache(store: store), performers: [HangingPerformer()])
    }

    func state(_ phase: DownloadActivityState.Phase, inFlight: Int, fraction: Double, title: String? = nil)
        -> DownloadActivityState
    {
        DownloadActivityState(
            phase: phase, title: title, inFlight: inFlight, fractionCompleted: fraction, completed: 0,
            failed: phase == .failed ? 1 : 0, cancelled: 0, started: Date(timeIntervalSince1970: 100))
    }

    func glue() async throws -> DownloadLiveActivity {
        DownloadLiveActivity(attributes: attributes, feed: DownloadActivityFeed(queue: try await openQueue()))
    }

    @Test("A start requests one activity, updates update it, the end ends it with the final state")
    func startUpdateEnd() async throws {
        let live = try await glue()
        let first = state(.downloading, inFlight: 1, fraction: 0, title: "A")
        let second = state(.downloading, inFlight: 2, fraction: 0.5)
        let last = state(.failed, inFlight: 0, fraction: 0.5)
        await live.apply(.start(first))
        await live.apply(.update(second))
        await live.apply(.end(last))
        let activities = Activity<DownloadActivityAttributes>.activities
        #expect(activities.count == 1)
        let activity = try #require(activities.first)
        #expect(activity.attributes == attributes)
        #expect(activity.standInCalls == [Call.request(first), .update(second), .end(last, .default)])
        #expect(activity.activityState == .ended)
        #expect(activity.content.state == last)
        #expect(activity.standInViolations.isEmpty)
        // A later update has no activity to update: it requests a new one (never touches the ended one).
        await live.apply(.start(first))
        #expect(Activity<DownloadActivityAttributes>.activities.count == 2)
        #expect(activity.standInViolations.isEmpty)
    }

    @Test("An idle end dismisses at once; an end with no activity does nothing")
    func idleEndAndEndWithoutActivity() async throws {
        let live = try await glue()
        await live.apply(.end(state(.completed, inFlight: 0, fraction: 1)))
        #expect(Activity<DownloadActivityAttributes>.activities.isEmpty)
        await live.apply(.start(state(.downloading, inFlight: 1, fraction: 0)))
        await live.apply(.end(state(.idle, inFlight: 0, fraction: 0)))
        let activity = try #require(Activity<DownloadActivityAttributes>.activities.first)
        #expect(activity.standInCalls.last == .end(state(.idle, inFlight: 0, fraction: 0), .immediate))
        #expect(activity.activityState == .dismissed)
    }

    @Test("A start while an earlier launch's activity still runs updates that one: never two")
    func adoptsTheRunningActivity() async throws {
        let earlier = try await glue()
        await earlier.apply(.start(state(.downloading, inFlight: 1, fraction: 0.2)))
        // The app relaunched: a new glue.
        let live = try await glue()
        let resumed = state(.downloading, inFlight: 1, fraction: 0.3)
        await live.apply(.start(resumed))
        let activities = Activity<DownloadActivityAttributes>.activities
        #expect(activities.count == 1)
        #expect(activities.first?.standInCalls.last == .update(resumed))
        // With none running, an update (its start lost) requests one.
        Activity<DownloadActivityAttributes>.standInReset()
        let fresh = try await glue()
        await fresh.apply(.update(resumed))
        #expect(Activity<DownloadActivityAttributes>.activities.first?.standInCalls == [.request(resumed)])
    }

    @Test("Run with nothing in flight ends at once the activity an earlier launch left running")
    func runEndsAnUnbackedLeftover() async throws {
        let earlier = try await glue()
        let shown = state(.downloading, inFlight: 1, fraction: 0.2)
        await earlier.apply(.start(shown))
        let leftover = try #require(Activity<DownloadActivityAttributes>.activities.first)
        // The app relaunched with nothing in flight: the feed tells no change.
        let live = try await glue()
        let running = Task { await live.run() }
        defer { running.cancel() }
        for _ in 0..<2000 where leftover.activityState == .active {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(leftover.activityState == .dismissed)
        #expect(leftover.standInCalls == [Call.request(shown), .end(nil, .immediate)])
        #expect(leftover.standInViolations.isEmpty)
        #expect(Activity<DownloadActivityAttributes>.activities.count == 1)
    }

    @Test("Run with a download in flight keeps the activity an earlier launch left running, updated")
    func runAdoptsABackedLeftover() async throws {
        let earlier = try await glue()
        await earlier.apply(.start(state(.downloading, inFlight: 1, fraction: 0.2)))
        let leftover = try #require(Activity<DownloadActivityAttributes>.activities.first)
        let queue = try await openQueue()
        _ = try await queue.enqueue(URL(string: "https://example.invalid/a")!, cacheKey: "a", kind: "hanging")
        let live = DownloadLiveActivity(attributes: attributes, feed: DownloadActivityFeed(queue: queue))
        let running = Task { await live.run() }
        defer { running.cancel() }
        for _ in 0..<2000 where leftover.standInCalls.count < 2 {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(leftover.activityState == .active)
        guard case .update(let shown) = leftover.standInCalls.dropFirst().first else {
            Issue.record("not updated: \(leftover.standInCalls)")
            return
        }
        #expect(shown.inFlight == 1)
        #expect(Activity<DownloadActivityAttributes>.activities.count == 1)
        try await queue.cancelAll()
    }

    @Test("A refused request is kept; the next change asks again")
    func refusal() async throws {
        let live = try await glue()
        Activity<DownloadActivityAttributes>.standInRefuse = true
        await live.apply(.start(state(.downloading, inFlight: 1, fraction: 0)))
        #expect(live.requestFailure as? ActivityAuthorizationError == .denied)
        #expect(Activity<DownloadActivityAttributes>.activities.isEmpty)
        Activity<DownloadActivityAttributes>.standInRefuse = false
        await live.apply(.update(state(.downloading, inFlight: 1, fraction: 0.1)))
        #expect(live.requestFailure == nil)
        #expect(Activity<DownloadActivityAttributes>.activities.count == 1)
    }

    @Test("The longest title the model keeps fits ActivityKit's 4 KB")
    func largestStateFits() async throws {
        let live = try await glue()
        var model = DownloadActivityModel()
        let title = String(repeating: "\u{1}", count: 10_000)
        let applied = model.apply(
            .init(id: UUID(), title: title, isDiscretionary: false, status: .downloading, fraction: 0.5), at: Date())
        let change = try #require(applied)
        await live.apply(change)
        #expect(live.requestFailure == nil)
        #expect(Activity<DownloadActivityAttributes>.activities.count == 1)
    }

    @Test("The cancel-all URL cancels every download the activity shows through the queue; other URLs are not taken")
    func cancelAll() async throws {
        let queue = try await openQueue()
        let live = DownloadLiveActivity(attributes: attributes, feed: DownloadActivityFeed(queue: queue))
        #expect(await live.handle(URL(string: "example-app://elsewhere")!) == nil)
        let empty = try #require(await live.handle(attributes.cancelAllURL))
        #expect(empty.isEmpty)
        let a = try await queue.enqueue(URL(string: "https://example.invalid/a")!, kind: "hanging")
        let b = try await queue.enqueue(URL(string: "https://example.invalid/b")!, kind: "hanging")
        let shown = Task { await live.run() }
        defer { shown.cancel() }
        for _ in 0..<500 where Activity<DownloadActivityAttributes>.activities.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(Activity<DownloadActivityAttributes>.activities.first?.content.state.inFlight == 2)
        let results = try #require(await live.handle(attributes.cancelAllURL))
        #expect(Set(results.keys) == [a.id, b.id])
        for id in [a.id, b.id] {
            await #expect(throws: DownloadError.cancelled) { try await queue.completion(of: id) }
            let error = DownloadError.cancelled.cocoaError
            #expect(error.domain == NSCocoaErrorDomain && error.code == 3072)
        }
        // The activity shown ends cancelled.
        for _ in 0..<500 where Activity<DownloadActivityAttributes>.activities.first?.activityState != .ended {
            try await Task.sleep(for: .milliseconds(10))
        }
        let activity = try #require(Activity<DownloadActivityAttributes>.activities.first)
        #expect(activity.activityState == .ended)
        #expect(activity.content.state.phase == .cancelled)
        #expect(activity.content.state.cancelled == 2)
    }
}
