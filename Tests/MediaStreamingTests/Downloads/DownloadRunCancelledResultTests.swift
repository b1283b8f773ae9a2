import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A performer that ends every run with `DownloadError.cancelled` though
/// nobody stopped the run (a joined fetch cancelled by its owner, say).
private struct CancelledResultPerformer: DownloadPerformer {
    var kind: String { "cancelled-result" }

    func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
        throw .cancelled
    }

    func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}

/// A run that ends with a cancellation while it is still the latest and
/// downloading ends the download (failed, resumable): it never stays
/// downloading with no run, which would keep its slot and `completion()` forever.
@Suite("A live run's cancelled result ends the download", .timeLimit(.minutes(1)))
struct DownloadRunCancelledResultTests {
    @Test("A run ending in cancelled, not stopped, leaves the download failed, and resume runs it again")
    func cancelledResultOfALiveRun() async throws {
        let test = try TestCache()
        let record = DownloadRecord(url: URL(string: "http://127.0.0.1:9/a.mp4")!, cacheKey: "a.mp4", queueOrder: 0)
        let download = MediaDownload(
            record: record, key: "a.mp4", holder: "test/a.mp4", performer: CancelledResultPerformer(),
            cache: test.cache, onChange: {})
        download.start()
        await download.latestRunTask?.value
        #expect(download.state == .failed(.cancelled))
        await #expect(throws: DownloadError.cancelled) { try await download.completion() }

        download.resume()
        #expect(download.state == .queued)
        download.start()
        #expect(download.latestRun == 2)
        await download.latestRunTask?.value
        #expect(download.state == .failed(.cancelled))
    }
}
