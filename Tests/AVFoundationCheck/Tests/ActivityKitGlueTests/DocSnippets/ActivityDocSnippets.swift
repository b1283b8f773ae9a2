@_spi(StandIn) import ActivityKit
import Foundation
import MediaDownloads
import MediaDownloadsActivityKitGlue
import MediaStore
import MediaStreaming
import Testing

// The Swift block of MediaDownloads.docc/DownloadActivity.md, compiled as
// shown against the stand-in (`Tools/check-docs` fails when a block of the
// documents is not one of these regions).
// snippet: download-activity (Sources/MediaDownloads/MediaDownloads.docc/DownloadActivity.md)
@MainActor final class DownloadsActivityController {
    let live: DownloadLiveActivity
    private var shown: Task<Void, Never>?

    init(queue: DownloadQueue, titles: @escaping @Sendable (DownloadRecord) -> String) {
        let feed = DownloadActivityFeed(queue: queue, title: titles)
        let attributes = DownloadActivityAttributes(
            name: "Downloads", cancelAllURL: URL(string: "myapp://downloads/cancel-all")!)
        live = DownloadLiveActivity(attributes: attributes, feed: feed)
    }

    /// At launch, in the foreground (an activity starts only there).
    func start() {
        shown = Task { [live] in await live.run() }
    }

    /// From the app's `onOpenURL` (or `application(_:open:options:)`).
    func open(_ url: URL) async -> Bool {
        await live.handle(url) != nil
    }
}
// end snippet

// In the glue's suite: the stand-in's activities are the process's, and its tests run one at a time.
extension DownloadLiveActivityTests {
    @Test("The article's controller shows the queue's downloads and takes only its cancel-all URL")
    func articleController() async throws {
        let queue = try await openQueue()
        let controller = DownloadsActivityController(queue: queue) { _ in "Album" }
        controller.start()
        _ = try await queue.enqueue(URL(string: "https://example.invalid/a")!, kind: "hanging")
        for _ in 0..<500 where Activity<DownloadActivityAttributes>.activities.isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(Activity<DownloadActivityAttributes>.activities.first?.content.state.title == "Album")
        #expect(await controller.open(URL(string: "myapp://elsewhere")!) == false)
        #expect(await controller.open(URL(string: "myapp://downloads/cancel-all")!))
        #expect(await queue.downloads.allSatisfy { $0.status == .failed(.cancelled) })
    }
}
