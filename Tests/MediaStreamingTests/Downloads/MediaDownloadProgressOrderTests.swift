import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Reports 10 bytes from a thread of its own (held by the test at the
/// publish hook), then 20 once that one is held; then runs until cancelled.
private struct TwoReportsPerformer: DownloadPerformer {
    var kind: String { "two-reports" }
    let firstHeld: DispatchSemaphore

    func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
        Thread.detachNewThread { context.report(bytes: 10, total: 100) }
        await Task.detached { [firstHeld] in firstHeld.wait() }.value
        context.report(bytes: 20, total: 100)
        while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        throw .cancelled
    }

    func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}

/// A download's `Foundation.Progress` ends at its latest counts when two
/// progress changes are told at once: the older one, set last, does not
/// take it back.
@Suite("MediaDownload's Progress keeps the latest counts", .timeLimit(.minutes(1)))
struct MediaDownloadProgressOrderTests {
    @Test("An older count told after a newer one does not set the Progress back")
    func olderCountToldLateIsDropped() async throws {
        let test = try TestCache()
        let firstHeld = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let firstDone = DispatchSemaphore(value: 0)
        let hooks = DownloadRunHooks()
        hooks.publish.withLock {
            $0 = { snapshot in
                guard snapshot.bytes == 10 else { return }
                firstHeld.signal()
                release.wait()
                // Let the test see when this telling has set the Progress.
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { firstDone.signal() }
            }
        }
        let record = DownloadRecord(url: URL(string: "http://127.0.0.1:9/a.mp4")!, cacheKey: "a.mp4", queueOrder: 0)
        let download = MediaDownload(
            record: record, key: "a.mp4", holder: "test/a.mp4", performer: TwoReportsPerformer(firstHeld: firstHeld),
            cache: test.cache, hooks: hooks, onChange: {})
        download.start()
        await eventually("the newer count is set") { download.progress.completedUnitCount == 20 }
        release.signal()
        await Task.detached { firstDone.wait() }.value
        #expect(download.snapshot.bytes == 20)
        #expect(download.progress.completedUnitCount == 20, "the older count was set last")
        download.cancel()
        await download.latestRunTask?.value
    }
}
