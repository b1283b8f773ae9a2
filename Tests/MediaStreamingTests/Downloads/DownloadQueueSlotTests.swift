import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A run ends its download in its own store write; the queue takes that
/// end in afterwards. The slot it frees must not start the next download
/// before observers heard the end: with one slot, they never hear two
/// downloads downloading at once.
///
/// Its 6 rounds save the index about 730 times (one `fdatasync` each): a
/// couple of seconds alone, more than a minute while other suites fill the
/// disk (CI once), hence the three minutes.
@Suite("Download queue: a slot is freed once its run's end is told", .timeLimit(.minutes(3)))
struct DownloadQueueSlotTests {
    /// Done at once, with nothing to hold.
    struct InstantPerformer: DownloadPerformer {
        var kind: String { "instant" }

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
            []
        }

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
    }

    @Test("With one slot, observers never hear two downloads downloading")
    func oneDownloadingAtATime() async throws {
        // Each round is a race the queue must win every time (a loose queue lost one in three).
        for round in 0..<6 {
            #expect(try await Self.mostDownloadingAtOnce(round: round) == 1, "round \(round)")
        }
    }

    /// The most downloads observers heard downloading at once, of 40
    /// instant ones queued with one slot.
    static func mostDownloadingAtOnce(round: Int) async throws -> Int {
        let test = try TestCache()
        let queue = try await DownloadQueue.open(
            cache: test.cache,
            configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 1, pollInterval: .milliseconds(1)),
            performers: [InstantPerformer()])
        let updates = await queue.updates()
        let count = 40
        for index in 0..<count {
            let key = "instant-\(round)-\(index)"
            try await queue.enqueue(URL(string: "https://example.invalid/\(key)")!, cacheKey: key, kind: "instant")
        }
        var statuses: [UUID: DownloadStatus] = [:]
        var mostAtOnce = 0
        for await record in updates {
            statuses[record.id] = record.status
            mostAtOnce = max(mostAtOnce, statuses.values.filter { $0 == .downloading }.count)
            if statuses.count == count, statuses.values.allSatisfy({ $0 == .completed }) { break }
        }
        return mostAtOnce
    }
}
