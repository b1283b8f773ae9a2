import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// `DownloadQueue.updates()` tells each download's progress: a save of
/// the index made for another download's change marks every download's
/// bytes saved, and must tell those that moved (the polls tell only
/// bytes that moved since the last save). No origin, no poll: performers
/// that report what the test lets them, then run until cancelled.
@Suite("Download queue: progress on updates()", .timeLimit(.minutes(1)))
struct DownloadQueueUpdatesTests {
    /// Reports 100 of 1000 bytes once `gate` opens, then runs until cancelled.
    struct ReportingPerformer: UntilCancelledPerformer {
        static let kind = "reporting"
        let gate: AsyncGate

        func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
            -> [StoredEntry]
        {
            await gate.pass()
            context.report(bytes: 100, total: 1000)
            try? await Task.sleep(for: .seconds(3600))
            throw .cancelled
        }
    }

    /// Reports nothing; runs until cancelled.
    struct QuietPerformer: UntilCancelledPerformer {
        static let kind = "quiet"
    }

    @Test("Bytes saved with another download's change are told on updates()")
    func progressSavedWithAnotherChangeIsTold() async throws {
        let test = try TestCache()
        let gate = AsyncGate()
        // No poll during the test: what observers hear comes from the saves.
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .seconds(3600)),
            performers: [ReportingPerformer(gate: gate), QuietPerformer()])
        let reporting = try await queue.enqueue(
            URL(string: "https://example.invalid/reporting")!, cacheKey: "reporting", kind: ReportingPerformer.kind)
        let quiet = try await queue.enqueue(
            URL(string: "https://example.invalid/quiet")!, cacheKey: "quiet", kind: QuietPerformer.kind)
        await eventually("both run") {
            await queue.downloads.allSatisfy { $0.status == .downloading }
        }
        let updates = await queue.updates()
        gate.open()
        await eventually("the progress is in the record") { await queue.download(reporting.id)?.bytesStored == 100 }
        // Another download's change saves the index, the reporting one's bytes with it.
        try await queue.stop(quiet.id)
        var toldBytes: [Int] = []
        for await record in updates {
            if record.id == reporting.id { toldBytes.append(record.bytesStored) }
            if record.id == quiet.id, record.status == .stopped(.user) { break }
        }
        #expect(toldBytes.contains(100), "the 100 bytes saved with the stop were never told: \(toldBytes)")
        try await queue.cancelAll()
    }
}
