import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// Preloading through a real nginx: by duration (checked with ffmpeg), by
/// bytes, cancelled, and the playlist window.
@Suite(
    "Preloading", .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(1)))
struct PreloadTests {
    let server = NginxServer.shared

    /// Serves a Preload fixture under its own name.
    func publish(_ name: String) throws -> (url: URL, data: Data) {
        let data = try Fixtures.data("Preload/\(name)")
        try server.publish(data, at: "preload-\(name)")
        return (server.url("preload-\(name)"), data)
    }

    @Test(
        "preload(duration: 10) caches a prefix that decodes to at least 10 s, and at most one chunk more than it needs",
        .enabled(if: ExternalTool.available("ffmpeg"), "needs ffmpeg"),
        arguments: ["cbr.mp3", "vbr.mp3", "track.m4a", "track.flac"])
    func preloadByDuration(name: String) async throws {
        let (url, data) = try publish(name)
        let test = try TestCache()
        let preloader = Preloader(cache: test.cache)
        let needed = try await preloader.preload(url, duration: 10).completion()
        #expect(needed > 0 && needed < data.count)
        let ranges = try test.cache.cachedRanges(for: url)
        let prefix = try #require(ranges.first)
        #expect(ranges.count == 1 && prefix.lowerBound == 0, "\(ranges)")
        #expect(
            prefix.upperBound >= needed && prefix.upperBound <= needed + TestCache.chunkSize, "\(prefix) for \(needed)")
        let stored = try test.store.read(forKey: url.absoluteString, range: 0..<needed)
        #expect(stored == data[0..<needed])
        let decoded = try decodedDuration(of: stored, name: name)
        #expect(decoded >= 10, "\(name): \(needed) bytes decode to \(decoded) s")
        // What the origin sent: the cached prefix, nothing past it.
        #expect(
            test.origin.bodyBytes(for: url) <= prefix.upperBound, "\(test.origin.bodyBytes(for: url)) bytes fetched")
    }

    @Test("An MP4 with its index at the end: the prefix and the index are cached")
    func preloadFetchesATrailingIndex() async throws {
        let (url, data) = try publish("tail-moov.m4a")
        let test = try TestCache()
        let needed = try await Preloader(cache: test.cache).preload(url, duration: 10).completion()
        let ranges = try test.cache.cachedRanges(for: url)
        #expect(ranges.first?.lowerBound == 0 && (ranges.first?.upperBound ?? 0) >= needed)
        #expect(ranges.last?.upperBound == data.count, "the index at the end: \(ranges)")
        #expect(ranges.byteCount < data.count)
    }

    @Test("preload(bytes:) caches exactly the byte count (its last chunk short), and fetches nothing else")
    func preloadByBytes() async throws {
        let test = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let bytes = try await Preloader(cache: test.cache).preload(url, bytes: 40_000).completion()
        #expect(bytes == 40_000)
        #expect(try test.cache.cachedRanges(for: url) == [0..<40_000])
        #expect(test.origin.bodyBytes == 40_000)
        #expect(try test.store.read(forKey: url.absoluteString, range: 0..<40_000) == original[0..<40_000])
    }

    @Test("cancelPreload stops it at a chunk boundary; what it cached stays")
    func cancelPreload() async throws {
        let original = try Fixtures.data("track.wav")
        try server.publish(original, at: "preload-cancel.wav")
        let url = server.url("slow/preload-cancel.wav")
        let test = try TestCache(configuration: StreamingConfiguration(chunksPerRequest: 4, stallTimeout: .seconds(5)))
        let preloader = Preloader(cache: test.cache)
        let task = preloader.preload(url, bytes: original.count)
        for _ in 0..<500 where test.origin.bodyBytes(for: url) < 100_000 { try await Task.sleep(for: .milliseconds(5)) }
        preloader.cancelPreload(url)
        await #expect(throws: StreamingError.cancelled) { try await task.completion() }
        #expect(preloader.running.isEmpty)
        var fetched = test.origin.bodyBytes(for: url)
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(100))
            if test.origin.bodyBytes(for: url) == fetched { break }
            fetched = test.origin.bodyBytes(for: url)
        }
        let cached = try test.cache.cachedRanges(for: url)
        #expect(cached.first?.lowerBound == 0 && cached.byteCount >= 64 * 1024 && cached.byteCount < original.count)
        #expect(cached.byteCount % TestCache.chunkSize == 0)
        #expect(try test.cachedBytesMatch(url, original))
    }

    @Test("The playlist window keeps the next items warm and cancels those that fell out")
    func playlistWindow() async throws {
        let test = try TestCache()
        let names = ["track.mp3", "track.aac", "track.flac", "track.m4a", "track.wav", "track.ogg"]
        let playlist = names.map { server.url($0) }
        let preloader = Preloader(cache: test.cache)
        let first = preloader.keepWarm(playlist, current: 0, ahead: 2, amount: .bytes(20_000))
        #expect(first.map(\.url) == [playlist[1], playlist[2]])
        #expect(Set(preloader.running.keys) == Set(playlist[1...2].map(\.absoluteString)))
        let next = preloader.keepWarm(playlist, current: 2, ahead: 2, amount: .bytes(20_000))
        #expect(next.map(\.url) == [playlist[3], playlist[4]])
        #expect(Set(preloader.running.keys) == Set(playlist[3...4].map(\.absoluteString)))
        for task in next { try await task.completion() }
        for url in playlist[3...4] {
            #expect(try test.cache.cachedRanges(for: url).first == 0..<20_000)
        }
        #expect(try test.cache.cachedRanges(for: playlist[5]).isEmpty)
        // At the end of the playlist, nothing is left to warm.
        #expect(preloader.keepWarm(playlist, current: 5, ahead: 2, amount: .bytes(20_000)).isEmpty)
        #expect(preloader.running.isEmpty)
    }
}

/// The playlist window's arithmetic (no network).
@Suite("Playlist window")
struct PlaylistWindowTests {
    @Test func theNextItemsFewerAtTheEndNoneOutside() {
        #expect(PlaylistWindow.next(2, after: 0, count: 5) == [1, 2])
        #expect(PlaylistWindow.next(3, after: 3, count: 5) == [4])
        #expect(PlaylistWindow.next(2, after: 4, count: 5) == [])
        #expect(PlaylistWindow.next(2, after: -1, count: 5) == [0, 1])
        #expect(PlaylistWindow.next(2, after: 7, count: 5) == [])
        #expect(PlaylistWindow.next(2, after: -3, count: 5) == [])
        #expect(PlaylistWindow.next(0, after: 0, count: 5) == [])
        #expect(PlaylistWindow.next(Int.max, after: 1, count: 4) == [2, 3])
    }
}
