import Foundation
import MediaStore
import MediaStreaming
import TestSupport
import Testing

/// An origin that answers every range with a `206` shorter than asked is
/// asked again a bounded number of times only: the reader gets a typed
/// error within seconds, and nothing is requested once it has left.
@Suite("Hostile origin: short 206 answers")
struct ShortPartialContentTests {
    /// A session of its own (origins share one per timeout): the callbacks
    /// of other suites' transfers do not delay these.
    static let timeout: TimeInterval = 8

    static let content = Data((0..<(256 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })

    /// How the origin lies about a range.
    enum Lie: CaseIterable {
        /// `Content-Range` claims the range asked for; the body (and `Content-Length`) is half of it.
        case halfBody
        /// `Content-Range` names the first half of the range asked for, and the body is that half.
        case shorterRange
    }

    static func origin(_ lie: Lie) throws -> ScriptedOrigin {
        try ScriptedOrigin { request, reply in
            let asked = request.range ?? 0..<content.count
            let range = asked.lowerBound..<min(asked.upperBound, content.count)
            let half = range.lowerBound..<(range.lowerBound + max(1, range.count / 2))
            let claimed = lie == .halfBody ? range : half
            reply.respond(
                status: 206,
                headers: [
                    "Content-Type": "audio/mpeg", "ETag": "\"v1\"", "Accept-Ranges": "bytes",
                    "Content-Range": "bytes \(claimed.lowerBound)-\(claimed.upperBound - 1)/\(content.count)",
                ], body: content.subdata(in: half))
        }
    }

    @Test(arguments: Lie.allCases)
    func theReaderFailsAfterBoundedRequests(_ lie: Lie) async throws {
        let origin = try Self.origin(lie)
        defer { origin.stop() }
        let cache = try TestCache(
            configuration: StreamingConfiguration(
                chunksPerRequest: 2, retryPolicy: RetryPolicy(maxRetries: 2), stallTimeout: .seconds(2)),
            origin: HTTPOrigin(timeout: .seconds(Self.timeout)))
        let player = cache.player(origin.url("/short.mp3"))
        let started = ContinuousClock.now
        let outcome = await player.load(contentInformation: true, offset: 0, length: nil)
        let elapsed = ContinuousClock.now - started
        switch outcome.error {
        case .origin(.truncated), .origin(.contentRangeMismatch): break
        default: Issue.record("the reader got \(outcome.data.count) bytes and \(String(describing: outcome.error))")
        }
        // 1-3 s alone; the full parallel run on a busy machine stretches every test (to 27 s here).
        #expect(elapsed < .seconds(120))
        #expect(outcome.data == Self.content.prefix(outcome.data.count))
        // Each request keeps a chunk (progress) but the last, asked 1 + maxRetries times.
        let asked = origin.requests.count
        #expect(asked <= Self.content.count / TestCache.chunkSize + 3, "\(asked) requests")
        // The reader has gone: no request follows.
        try await Task.sleep(for: .milliseconds(500))
        #expect(origin.requests.count == asked)
        #expect(try cache.cachedBytesMatch(origin.url("/short.mp3"), Self.content))
    }

    /// Before the content information is known the probe runs for whoever
    /// waits for it; once every waiter has left, it stops retrying.
    @Test func theProbeStopsWhenThePlayerLeaves() async throws {
        // 8 bytes of a 206 that claims 64 KiB, without a type: too short to
        // sniff, so the content information never resolves.
        let origin = try ScriptedOrigin { _, reply in
            reply.respond(
                status: 206, headers: ["Content-Range": "bytes 0-65535/65536", "ETag": "\"v1\""],
                body: Data(repeating: 1, count: 8))
        }
        defer { origin.stop() }
        let cache = try TestCache(
            configuration: StreamingConfiguration(
                chunksPerRequest: 2, retryPolicy: RetryPolicy(maxRetries: 40), stallTimeout: .seconds(2)))
        let player = cache.player(origin.url("/never"))
        let handle = player.start(contentInformation: true, offset: 0, length: nil)
        for _ in 0..<500 where origin.requests.count < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(origin.requests.count >= 2)
        player.cancel(handle)
        // A retry already under way may still go out; then none.
        try await Task.sleep(for: .milliseconds(300))
        let asked = origin.requests.count
        try await Task.sleep(for: .seconds(1))
        #expect(origin.requests.count == asked, "\(origin.requests.count - asked) requests after the player left")
    }
}
