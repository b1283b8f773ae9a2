import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// Back-pressure: a reader slower than the origin costs bounded memory
/// (issue 4: "a whole file is never in memory"). The bound is checked on
/// the loader's own count of bytes handed to readers and not yet taken
/// (`StreamingStatistics.peakReaderBacklogBytes`), not on RSS.
///
/// The slow reader takes its bytes the way `ResourceLoader` does (plan,
/// then the store or a download's stream), pausing with `Task.sleep`
/// rather than blocking one of the few threads the tests share.
@Suite(
    "Back-pressure", .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(3)))
struct BackPressureTests {
    let server = NginxServer.shared

    /// What a slow read got.
    struct SlowRead {
        var body = Data()
        var fromStore = 0
        var largestPiece = 0
    }

    /// Reads all of `loader`'s resource, pausing `pause` after each piece
    /// and `stall` once past `stallOffset` (while a download feeds it).
    ///
    /// The premise of both tests, that the download got more than
    /// `readerBufferLimit` ahead during the stall, is checked rather than
    /// assumed: on a loaded machine the stall goes on (up to 10 s) until the
    /// loader has counted such a backlog.
    private func readSlowly(
        _ loader: ResourceLoader, stallOffset: Int, stall: Duration, pause: Duration
    ) async throws -> SlowRead {
        let limit = loader.cache.configuration.readerBufferLimit
        let length = try await loader.contentInformation().contentLength
        var read = SlowRead()
        var stalled = false
        reading: while read.body.count < length {
            switch try await loader.fetcher.plan(from: read.body.count, url: loader.url, headers: [:]) {
            case .end:
                break reading
            case .store(let range, let version):
                try loader.cache.store.read(
                    forKey: loader.cacheKey, range: range, includeExpired: true, version: version
                ) { bytes in
                    read.body.append(bytes)
                    read.fromStore += bytes.count
                }
            case .stream(let stream):
                for try await piece in stream {
                    read.body.append(piece)
                    read.largestPiece = max(read.largestPiece, piece.count)
                    if !stalled && read.body.count >= stallOffset {
                        stalled = true
                        try await Task.sleep(for: stall)
                        let deadline = ContinuousClock.now + .seconds(10)
                        while loader.statistics.peakReaderBacklogBytes <= limit, ContinuousClock.now < deadline {
                            try await Task.sleep(for: .milliseconds(50))
                        }
                    } else {
                        try await Task.sleep(for: pause)
                    }
                }
            }
        }
        return read
    }

    private func publish(_ name: String, size: Int) throws -> Data {
        var generator = SystemRandomNumberGenerator()
        let bytes = Data((0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try server.publish(bytes, at: name)
        return bytes
    }

    @Test("A slow reader of a cached resource is let go past the limit and goes on from the store")
    func slowReaderGoesOnFromTheStore() async throws {
        // Each chunk written is a commit: the limit is small, so that the
        // download outruns the stalled reader by more than it within the stall.
        let limit = 2 * TestCache.chunkSize
        let test = try TestCache(
            configuration: StreamingConfiguration(
                chunksPerRequest: 4, stallTimeout: 5, readerBufferLimit: limit))
        let url = server.url("slow-cached.bin")
        let original = try publish("slow-cached.bin", size: 1 << 20)
        let loader = test.cache.loader(for: url)
        let read = try await readSlowly(
            loader, stallOffset: 256 << 10, stall: .milliseconds(400), pause: .microseconds(200))
        #expect(read.body == original)
        let statistics = loader.statistics
        // The reader fell behind by more than the limit (the bound was
        // reached), and never by more than the limit and one piece.
        #expect(statistics.peakReaderBacklogBytes > limit)
        #expect(statistics.peakReaderBacklogBytes <= limit + read.largestPiece)
        #expect(statistics.readerBacklogBytes == 0)
        // Let go, it went on from the store; no byte was fetched twice.
        #expect(read.fromStore > 0)
        #expect(test.origin.bodyBytes <= original.count + 4 * TestCache.chunkSize)
        #expect(try await test.waitUntilComplete(url))
        #expect(try test.cachedBytesMatch(url, original))
    }

    @Test("A slow reader of an uncached resource holds the download back at the limit")
    func slowReaderHoldsAnUncachedDownload() async throws {
        let limit = 128 << 10
        let test = try TestCache(
            sizeLimit: 1 << 20,
            configuration: StreamingConfiguration(
                chunksPerRequest: 4, stallTimeout: 1, readerBufferLimit: limit))
        let url = server.url("slow-uncached.bin")
        let original = try publish("slow-uncached.bin", size: 3 << 19)
        let loader = test.cache.loader(for: url)
        // The stall is longer than the stall timeout: waiting for a reader is not a stall.
        // (A 1 s timeout, not less: a loaded CI machine can delay a real response by half a second.)
        let read = try await readSlowly(
            loader, stallOffset: 256 << 10, stall: .milliseconds(1_600), pause: .microseconds(200))
        #expect(read.body == original)
        #expect(await loader.cachingSkippedReason != nil)
        let statistics = loader.statistics
        #expect(statistics.peakReaderBacklogBytes > limit)
        #expect(statistics.peakReaderBacklogBytes <= limit + read.largestPiece)
        #expect(statistics.retries == 0)
        #expect(read.fromStore == 0)
        #expect(test.origin.bodyBytes <= original.count + 4 * TestCache.chunkSize)
    }
}
