import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// `StreamingItem.download()` runs one after another: a run that ends
/// late must not let go of the next run's task.
@Suite("Streaming item download runs", .timeLimit(.minutes(1)))
struct StreamingItemDownloadTests {
    /// Run A, cancelled, ends only after run B started. It used to clear
    /// the item's task whatever it was by then, B's: `cancelDownload()` then
    /// missed B, which ran on, and a further `download()` started a second
    /// run beside it.
    @Test("A cancelled download ending after the next one started leaves the next one cancellable")
    func lateEndKeepsTheNextRun() async throws {
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let test = try TestCache(origin: FakeOrigin(serving: content))
        let item = StreamingItem(url: URL(string: "https://example.invalid/item")!, cache: test.cache)
        let first = AsyncGate()
        let second = AsyncGate()
        test.configuration.itemHooks.downloadEnd.withLock { $0 = AsyncGate.firstThenSecond(first, second) }

        item.download()
        let runA = try #require(item.runningDownload)
        await first.arrived()
        item.cancelDownload()
        #expect(item.runningDownload == nil)
        item.download()
        let runB = try #require(item.runningDownload)
        await second.arrived()

        // A ends now, after B started.
        first.open()
        await runA.value
        #expect(item.runningDownload == runB, "the late end of run A let go of run B")

        item.cancelDownload()
        second.open()
        await runB.value
        #expect(second.cancellations == [true], "cancelDownload() did not reach run B")
    }
}
