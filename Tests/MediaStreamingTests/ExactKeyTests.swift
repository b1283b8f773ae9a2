import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Cache keys that are equal Strings (canonical equivalence) but different
/// bytes are two entries in the store; the work keyed by cache key must
/// keep them apart too.
@Suite struct ExactKeyTests {
    let composed = "track-caf\u{E9}"
    let decomposed = "track-cafe\u{301}"

    @Test func keysCompareAsTheStoreDoes() {
        #expect(composed == decomposed)
        #expect(ExactKey(composed) != ExactKey(decomposed))
        #expect(ExactKey(composed) == ExactKey("track-caf\u{E9}"))
        #expect(Set([ExactKey(composed), ExactKey(decomposed), ExactKey(composed)]).count == 2)
    }

    @Test func twoSuchKeysGetTwoFetchers() throws {
        let test = try TestCache()
        let first = test.cache.fetcher(forKey: composed)
        let second = test.cache.fetcher(forKey: decomposed)
        #expect(first !== second)
        #expect(test.cache.fetcher(forKey: composed) === first)
    }

    /// Two downloads of such keys are two downloads: the downloader used
    /// to return the first for the second, whose entry was never fetched.
    @Test func offlineDownloaderKeepsTwoSuchKeysApart() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let content = Data((0..<(2 * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try store.put(content, forKey: composed)
        try store.put(content, forKey: decomposed)
        let downloader = OfflineDownloader(cache: test.cache)
        let first = downloader.download(URL(string: "https://example.invalid/composed")!, cacheKey: composed)
        let second = downloader.download(URL(string: "https://example.invalid/decomposed")!, cacheKey: decomposed)
        #expect(first !== second)
        #expect(second.key.utf8.elementsEqual(decomposed.utf8))
        #expect(downloader.downloads.count == 2)
        for _ in 0..<1000 where first.state != .completed || second.state != .completed {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try store.info(forKey: composed)?.isPinned == true)
        #expect(try store.info(forKey: decomposed)?.isPinned == true, "the second key's entry was never pinned")
    }
}
