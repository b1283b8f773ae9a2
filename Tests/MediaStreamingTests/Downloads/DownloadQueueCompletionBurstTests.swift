import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// `DownloadQueue.completion(of:)` listens on `updates()`, whose buffer
/// keeps the newest records only. A burst of changes beyond it (one
/// save telling hundreds of downloads, as `cancelAll()` does) may drop
/// the record of the download waited for: the wait must still end. No
/// origin: performers that run until cancelled.
@Suite("Download queue: completion through a burst of changes", .timeLimit(.minutes(2)))
struct DownloadQueueCompletionBurstTests {
    struct HangingPerformer: UntilCancelledPerformer {
        static let kind = "hanging"
    }

    @Test("A download's end told among more changes than updates() buffers still ends completion(of:)")
    func completionEndsThroughABurst() async throws {
        let test = try TestCache()
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [HangingPerformer()])
        // More downloads than updates() buffers (256). The second is waited for: the first
        // record told goes straight to the waiting consumer, the rest into the buffer.
        var ids: [UUID] = []
        for index in 0..<300 {
            let key = "burst-\(index)"
            let record = try await queue.enqueue(
                URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: HangingPerformer.kind)
            ids.append(record.id)
        }
        let outcome = Locked<Result<Void, DownloadError>?>(nil)
        let waiting = Task {
            do throws(DownloadError) {
                try await queue.completion(of: ids[1])
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
        }
        // The wait subscribes at once (the queue is idle); then one save tells all 300 cancels
        // in queue order while the queue's executor, where the wait runs, is busy telling them.
        try await Task.sleep(for: .milliseconds(200))
        try await queue.cancelAll()
        await eventually("completion(of:) ends") { outcome.current != nil }
        let ended = outcome.current
        waiting.cancel()
        let result = try #require(ended)
        #expect(throws: DownloadError.cancelled) { try result.get() }
    }
}
