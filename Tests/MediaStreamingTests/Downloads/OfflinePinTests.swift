import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// An offline download paused or cancelled while it pins its completed
/// entry, which was pinned before it (by the app, or by another download
/// of the same key): no origin (the entry is already complete).
@Suite("Offline download stopped while it pins an entry already pinned", .timeLimit(.minutes(1)))
struct OfflinePinTests {
    /// The run pinned, then found itself stopped and unpinned: the pin
    /// the entry already had was dropped, and the app's "keep this" with it.
    @Test("A pause or cancel during the final pin leaves the pin the entry had", arguments: [false, true])
    func stopDuringThePinKeepsAnEarlierPin(cancel: Bool) async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let url = URL(string: "https://example.invalid/offline-pinned")!
        let key = test.cache.cacheKey(for: url)
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try store.put(content, forKey: key)
        try store.setPinned(true, forKey: key)
        let gate = BlockingGate()
        let hooks = DownloadRunHooks()
        hooks.hold.withLock { $0 = { gate.pass() } }
        let download = MediaDownload(
            record: DownloadRecord(url: url, cacheKey: key, queueOrder: 0), key: key,
            holder: OfflineDownloader.holder(ofKey: key), performer: ProgressiveDownloadPerformer(), cache: test.cache,
            hooks: hooks
        ) {}
        download.start()
        await gate.arrived()
        let run = try #require(download.latestRunTask)
        if cancel { download.cancel() } else { download.pause() }
        gate.open()
        await run.value
        #expect(download.state == (cancel ? .cancelled : .paused))
        #expect(try store.info(forKey: key)?.isPinned == true, "the download dropped the entry's earlier pin")
        #expect(test.origin.requests.isEmpty)
    }
}
