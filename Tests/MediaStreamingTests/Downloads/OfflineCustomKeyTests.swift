import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// A download queued with a cache key of its own is found and released by
/// that key. `release(_:)` takes a URL and releases the cache's key for it,
/// so such a download used to stay pinned for good.
@Suite("Offline download under its own cache key", .timeLimit(.minutes(1)))
struct OfflineCustomKeyTests {
    @Test func aDownloadUnderItsOwnKeyIsFoundAndReleasedByIt() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let key = "track-42@v3"
        let url = URL(string: "https://cdn.example.invalid/t/42.mp3?token=abc")!
        #expect(test.cache.cacheKey(for: url) != key)
        let content = Data((0..<(3 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        try store.put(content, forKey: key)  // every byte in: the download only pins

        let downloader = OfflineDownloader(cache: test.cache)
        let download = downloader.download(url, cacheKey: key)
        try await download.completion()
        #expect(try store.info(forKey: key)?.isPinned == true)
        #expect(downloader.download(forCacheKey: key) === download)
        #expect(downloader.download(for: url) == nil, "the URL's own key has no download")

        // The URL's release reaches the URL's key only: this one stays.
        try downloader.release(url)
        #expect(try store.info(forKey: key)?.isPinned == true)
        #expect(downloader.download(forCacheKey: key) === download)

        try downloader.release(cacheKey: key)
        #expect(try store.info(forKey: key)?.isPinned == false)
        #expect(downloader.download(forCacheKey: key) == nil)
        #expect(try store.data(forKey: key) == content)
        #expect(test.origin.requests.isEmpty)
    }
}
