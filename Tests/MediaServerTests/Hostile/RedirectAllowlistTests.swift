import Foundation
import MediaServer
import MediaStreaming
import TestSupport
import Testing

/// A redirect from an allowed origin is judged like the first URL: a hop to
/// an origin the allowlist does not allow is never fetched, the player gets
/// a 502 that says why, and nothing is stored under the allowed URL's key.
@Suite("Server redirects", .serialized, .timeLimit(.minutes(1)))
struct RedirectAllowlistTests {
    static let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    @Test func aHopToAPortTheAllowlistRefusesIsNeverFetched() async throws {
        let forbidden = try ScriptedOrigin { request, reply in reply.serve(Self.content, for: request) }
        defer { forbidden.stop() }
        let target = forbidden.url("/private.bin")
        let allowed = try ScriptedOrigin { _, reply in
            reply.respond(status: 302, headers: ["Location": target.absoluteString])
        }
        defer { allowed.stop() }
        let fixture = try AllowlistedServer(allowlist: OriginAllowlist(["127.0.0.1:\(allowed.port)"]))
        let url = allowed.url("/track.bin")
        let result = try await Curl.run([fixture.unminted(url)])
        #expect(result.status == 502)
        #expect(String(decoding: result.body, as: UTF8.self).contains("redirect refused"))
        #expect(forbidden.requests.isEmpty)
        #expect(try fixture.cache.cachedRanges(for: url).isEmpty)
    }

    @Test func aHopTheAllowlistAllowsIsFollowed() async throws {
        let second = try ScriptedOrigin { request, reply in reply.serve(Self.content, for: request) }
        defer { second.stop() }
        let target = second.url("/moved.bin")
        let first = try ScriptedOrigin { _, reply in
            reply.respond(status: 302, headers: ["Location": target.absoluteString])
        }
        defer { first.stop() }
        let fixture = try AllowlistedServer(
            allowlist: OriginAllowlist(["127.0.0.1:\(first.port)", "127.0.0.1:\(second.port)"]))
        let result = try await Curl.run([fixture.unminted(first.url("/track.bin"))])
        #expect(result.status == 200 && result.body == Self.content)
        #expect(!second.requests.isEmpty)
    }

    @Test func aRedirectLoopFailsClearly() async throws {
        let origin = try ScriptedOrigin { request, reply in
            let next = (Int(request.path.dropFirst()) ?? 0) + 1
            reply.respond(status: 302, headers: ["Location": "/\(next)"])
        }
        defer { origin.stop() }
        let fixture = try AllowlistedServer(allowlist: OriginAllowlist(["127.0.0.1:\(origin.port)"]))
        let result = try await Curl.run([fixture.unminted(origin.url("/0"))])
        #expect(result.status == 502)
        #expect(String(decoding: result.body, as: UTF8.self).contains("more than 5 redirects"))
        // One loading request asks once, plus one retry at most: each stops after 5 hops.
        #expect(origin.requests.count <= 12)
    }
}
