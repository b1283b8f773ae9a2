import Dispatch
import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// An offline download cancelled (or released) after its last byte is in,
/// while it pins its entry: no origin (the entry is already complete).
@Suite("Offline download cancelled while it pins", .timeLimit(.minutes(1)))
struct OfflineCancelTests {
    /// A cancel once every byte is stored wins over the pin being written:
    /// the download stays cancelled and its entry evictable. The task used
    /// to pin and mark it completed anyway, so `OfflineDownloader.release`
    /// at that moment left the entry pinned for good.
    @Test("A cancel during the final pin leaves the download cancelled and its entry unpinned")
    func cancelDuringThePinStands() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "offline-cancel"
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try store.put(content, forKey: key)
        let entered = DispatchSemaphore(value: 0)
        let gate = DispatchSemaphore(value: 0)
        defer { gate.signal() }
        // Holds the store's writer lock: the download's pin waits for it.
        Thread {
            try? store.performBatch { _ in
                entered.signal()
                gate.wait()
            }
        }.start()
        #expect(entered.wait(timeout: .now() + 10) == .success, "the writer lock was never taken")

        let downloader = OfflineDownloader(cache: test.cache)
        let download = downloader.download(URL(string: "https://example.invalid/\(key)")!, cacheKey: key)
        // Every byte is in (they were): what is left is the pin.
        for _ in 0..<1000 where download.snapshot.bytes < content.count { try await Task.sleep(for: .milliseconds(10)) }
        #expect(download.snapshot.bytes == content.count && download.state == .downloading)
        download.cancel()
        #expect(download.state == .cancelled)
        gate.signal()
        // The pin is written now; the task then sees the cancel and unpins
        // (a store write: up to 10 s on a loaded machine).
        for _ in 0..<1000 where try store.info(forKey: key)?.isPinned != false {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try store.info(forKey: key)?.isPinned == false, "a cancelled download's entry stays pinned")
        #expect(download.state == .cancelled)
        #expect(test.origin.requests.isEmpty)
    }
}
