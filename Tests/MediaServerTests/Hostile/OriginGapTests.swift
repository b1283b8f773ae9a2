import Foundation
import MediaServer
import MediaStreaming
import TestSupport
import Testing

/// A track whose store holds its first chunk while the origin fails: a
/// range inside the cached part is served, one inside the gap gets an
/// error status with a reason (never a 206 head followed by no body), and
/// so does a cold entry.
@Suite("Origin gap", .serialized)
struct OriginGapTests {
    /// How the origin fails once it has served the first chunk.
    enum Failure: String, Sendable, CaseIterable {
        case status503
        case reset
    }

    /// Whether the origin fails; set by the test.
    final class Switch: @unchecked Sendable {
        private let lock = NSLock()
        private var on = false
        var isOn: Bool { lock.withLock { on } }
        func turnOn() { lock.withLock { on = true } }
    }

    @Test(arguments: Failure.allCases)
    func aRangeInTheGapGetsAnErrorStatus(_ failure: Failure) async throws {
        let content = ScriptedServer.content(200_000)
        let failing = Switch()
        // A long origin wait: the full parallel run has kept a first answer waiting over 30 s.
        let fixture = try ScriptedServer(configuration: MediaServerConfiguration(originWaitTimeout: .seconds(120))) {
            request, reply in
            guard failing.isOn else { return reply.serve(content, for: request) }
            switch failure {
            case .status503: reply.respond(status: 503, body: Data("down\n".utf8))
            case .reset: reply.reset()
            }
        }
        let path = fixture.localPath("/track.bin")
        let warm = try await fixture.get(path, headers: ["Range": "bytes=0-999"])
        #expect(warm.status == 206)
        #expect(warm.body == Array(content.prefix(1000)))
        let url = fixture.origin.url("/track.bin")
        #expect(
            await ScriptedServer.eventually(within: 5) {
                fixture.origin.openConnections == 0
                    && ((try? fixture.cache.cachedRanges(for: url)) ?? []).isEmpty == false
            })
        failing.turnOn()
        let cached = try #require(try fixture.cache.cachedRanges(for: url).first)
        #expect(cached.lowerBound == 0)
        #expect(cached.upperBound < content.count, "the store holds a gap")

        let gap = cached.upperBound + 100
        let inGap = try await fixture.get(path, headers: ["Range": "bytes=\(gap)-\(gap + 999)"])
        #expect(inGap.status == 502)
        #expect(inGap.headers["content-range"] == nil)
        #expect(inGap.text.contains("origin"), "a reason: \(inGap.text)")

        let inCache = try await fixture.get(path, headers: ["Range": "bytes=100-1099"])
        #expect(inCache.status == 206)
        #expect(inCache.headers["content-range"] == "bytes 100-1099/\(content.count)")
        #expect(inCache.body == Array(content[100..<1100]))

        let cold = try await fixture.get(fixture.localPath("/cold.bin"), headers: ["Range": "bytes=0-"])
        #expect(cold.status == 502)
    }
}
