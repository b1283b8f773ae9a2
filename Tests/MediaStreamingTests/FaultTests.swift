import Foundation
import MediaStore
import MediaStreaming
import Testing

/// Behaviour 6: misbehaving origins. The player gets the bytes or a typed
/// error; the store never keeps a wrong byte.
@Suite(
    "Faulty origins", .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(3)))
struct FaultTests {
    let server = NginxServer.shared

    private func faulty(_ fault: FakeOrigin.Fault, times: Int = .max, stallTimeout: Duration = .seconds(2)) throws
        -> TestCache
    {
        try TestCache(
            configuration: StreamingConfiguration(
                chunksPerRequest: 2, retryPolicy: RetryPolicy(maxRetries: 2), stallTimeout: stallTimeout),
            origin: FakeOrigin(HTTPOrigin(timeout: .seconds(10)), fault: fault, times: times))
    }

    @Test(
        "6. 200 instead of 206: the player gets the bytes, the store the right ones",
        arguments: ["track.mp3", "track.wav"])
    func ignoresRange(name: String) async throws {
        let test = try faulty(.ignoreRange)
        let url = server.url(name)
        let original = try Fixtures.data(name)
        let player = test.player(url)
        _ = await player.load(contentInformation: true, offset: 0, length: 2)
        let middle = await player.load(offset: 100_000 % original.count, length: 20_000)
        #expect(middle.data == original[(100_000 % original.count)..<(100_000 % original.count + 20_000)])
        let whole = await player.load(offset: 0, length: nil)
        #expect(whole.data == original)
        #expect(try test.cachedBytesMatch(url, original))
        #expect(try await test.waitUntilComplete(url))
    }

    @Test("6. Chunked, no length: the length comes from the end of the body")
    func noLength() async throws {
        let test = try faulty(.noLength)
        let url = server.url("track.ogg")
        let original = try Fixtures.data("track.ogg")
        let (info, body, _) = try await test.player(url).play()
        #expect(info.contentLength == original.count)
        #expect(body == original)
        #expect(try await test.waitUntilComplete(url))
        #expect(try test.storedBytes(of: url) == original)
    }

    @Test("6. A wrong Content-Range is a typed error and nothing wrong is stored")
    func wrongContentRange() async throws {
        let test = try faulty(.wrongContentRange(shift: TestCache.chunkSize))
        let url = server.url("track.mp3")
        let original = try Fixtures.data("track.mp3")
        let outcome = await test.player(url).load(contentInformation: true, offset: 0, length: 2)
        guard case .origin(.contentRangeMismatch) = outcome.error else {
            Issue.record("expected a Content-Range mismatch, got \(String(describing: outcome.error))")
            return
        }
        #expect(try test.cachedBytesMatch(url, original))
        #expect((try test.store.info(forKey: url.absoluteString))?.cachedBytes ?? 0 == 0)
    }

    @Test("6. A wrong Content-Range in the middle of a play fails that read only")
    func wrongContentRangeLater() async throws {
        let healthy = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        _ = await healthy.player(url).load(contentInformation: true, offset: 0, length: 2)
        let test = try TestCache(
            origin: FakeOrigin(HTTPOrigin(timeout: .seconds(10)), fault: .wrongContentRange(shift: 1000), times: .max))
        // Reuse the healthy store's knowledge: the same store, a faulty origin.
        let store = healthy.store!
        let cache = StreamingCache(
            store: store, origin: FakeOrigin(HTTPOrigin(timeout: .seconds(10)), fault: .wrongContentRange(shift: 1000)),
            configuration: test.configuration)
        let outcome = await PlayerSimulator(loader: cache.loader(for: url)).load(offset: 200_000, length: 1000)
        guard case .origin(.contentRangeMismatch) = outcome.error else {
            Issue.record("expected a Content-Range mismatch, got \(String(describing: outcome.error))")
            return
        }
        #expect(try healthy.cachedBytesMatch(url, original))
    }

    @Test("6. A dropped connection is retried; the player gets every byte")
    func droppedThenRetried() async throws {
        let test = try faulty(.dropAfter(bytes: 5000), times: 2)
        let url = server.url("track.flac")
        let original = try Fixtures.data("track.flac")
        let (_, body, _) = try await test.player(url).play()
        #expect(body == original)
        #expect(test.cache.statistics.retries == 2)
        #expect(try await test.waitUntilComplete(url))
        #expect(try test.storedBytes(of: url) == original)
    }

    @Test("6. A connection that keeps dropping is a typed error; only correct bytes are kept")
    func keepsDropping() async throws {
        let healthy = try TestCache()
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        _ = await healthy.player(url).load(contentInformation: true, offset: 0, length: 2)
        // Each response drops before a whole 16 KiB chunk: no request makes
        // progress (one that keeps a chunk starts the retry count again).
        let cache = StreamingCache(
            store: healthy.store,
            origin: FakeOrigin(HTTPOrigin(timeout: .seconds(10)), fault: .dropAfter(bytes: 10_000)),
            configuration: StreamingConfiguration(chunksPerRequest: 2, retryPolicy: RetryPolicy(maxRetries: 1)))
        let outcome = await PlayerSimulator(loader: cache.loader(for: url)).load(offset: 0, length: nil)
        guard case .origin(let error) = outcome.error, error.isTransient else {
            Issue.record("expected a transient origin error, got \(String(describing: outcome.error))")
            return
        }
        #expect(outcome.data == original.prefix(outcome.data.count))
        #expect(try healthy.cachedBytesMatch(url, original))
    }

    @Test("6. A stalled response is abandoned after the stall timeout and retried")
    func stallRetried() async throws {
        let test = try faulty(.stallAfter(bytes: 3000), times: 1, stallTimeout: .seconds(1))
        let url = server.url("track.m4a")
        let original = try Fixtures.data("track.m4a")
        let (_, body, _) = try await test.player(url).play()
        #expect(body == original)
        // The stall costs one retry; on a loaded machine a slow healthy
        // response may cost another, so only the lower bound is exact.
        #expect(test.cache.statistics.retries >= 1)
    }

    @Test("6. 4xx and 5xx are typed errors; 5xx is retried, 4xx is not", arguments: [404, 503])
    func errorStatus(code: Int) async throws {
        let test = try faulty(.status(code))
        let url = server.url("track.mp3")
        let outcome = await test.player(url).load(contentInformation: true, offset: 0, length: 2)
        #expect(outcome.error == .origin(.httpStatus(code: code, url: url)))
        #expect(test.cache.statistics.retries == (code >= 500 ? 2 : 0))
        #expect(try test.store.info(forKey: url.absoluteString) == nil)
    }
}
