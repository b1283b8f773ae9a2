import Foundation
import MediaStreaming
import TestSupport
import Testing

/// Redirects are judged hop by hop by the origin's ``RedirectPolicy``: a
/// refused hop or one too many fails before any request reaches the target,
/// and no caller header (credentials or any other) reaches another origin.
@Suite("Redirects", .timeLimit(.minutes(1)))
struct RedirectTests {
    static let content = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 13) })

    /// The port of an origin made after the handler that needs it.
    final class PortBox: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        var port: Int {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    private func body(_ response: OriginResponse) async throws -> Data {
        var data = Data()
        for try await piece in response.body { data.append(piece) }
        return data
    }

    @Test func aSameOriginHopIsFollowedWithTheCallerHeaders() async throws {
        let origin = try ScriptedOrigin { request, reply in
            if request.path == "/a" {
                reply.respond(status: 302, headers: ["Location": "/b"])
            } else {
                reply.serve(Self.content, for: request)
            }
        }
        defer { origin.stop() }
        let http = HTTPOrigin(
            timeout: .seconds(5), headers: ["Authorization": "Bearer s"], redirects: .sameOrigin(or: { _ in false }))
        let response = try await http.fetch(
            OriginRequest(url: origin.url("/a"), range: 0..<100, headers: ["X-Token": "t"]))
        #expect(response.statusCode == 206)
        #expect(try await body(response) == Self.content.prefix(100))
        let followed = origin.requests(to: "/b")
        #expect(followed.count == 1)
        #expect(followed.first?.header("Authorization") == "Bearer s" && followed.first?.header("X-Token") == "t")
        #expect(followed.first?.range == 0..<100)
    }

    @Test func aHopThePolicyRefusesFailsWithoutReachingItsTarget() async throws {
        let forbidden = try ScriptedOrigin { request, reply in reply.serve(Self.content, for: request) }
        defer { forbidden.stop() }
        let target = forbidden.url("/secret")
        let allowed = try ScriptedOrigin { _, reply in
            reply.respond(status: 302, headers: ["Location": target.absoluteString], body: Data("moved".utf8))
        }
        defer { allowed.stop() }
        let http = HTTPOrigin(timeout: .seconds(5), redirects: .sameOrigin(or: { _ in false }))
        await #expect(throws: OriginError.redirectRefused(from: allowed.url("/a"), to: target)) {
            _ = try await http.fetch(OriginRequest(url: allowed.url("/a")))
        }
        #expect(allowed.requests.count == 1)
        #expect(forbidden.requests.isEmpty)
    }

    /// The standard policy follows `http`/`https` hops only: an explicit
    /// port does not make an `ftp:` URL a web origin.
    @Test func theStandardPolicyRefusesAnFTPHopWithAPort() async throws {
        let target = URL(string: "ftp://127.0.0.2:21/secret")!
        #expect(WebOrigin(target) == nil)
        let origin = try ScriptedOrigin { _, reply in
            reply.respond(status: 302, headers: ["Location": target.absoluteString], body: Data("moved".utf8))
        }
        defer { origin.stop() }
        let http = HTTPOrigin(timeout: .seconds(5))
        await #expect(throws: OriginError.redirectRefused(from: origin.url("/a"), to: target)) {
            _ = try await http.fetch(OriginRequest(url: origin.url("/a")))
        }
    }

    /// A same-origin-or-allowlisted policy whose check would let any host
    /// through still refuses a hop that is not `http`/`https`.
    @Test func anAllowlistPolicyRefusesAHopOfAnotherScheme() {
        let policy = RedirectPolicy.sameOrigin(or: { _ in true })
        let from = URL(string: "http://127.0.0.1:8080/a")!
        #expect(!policy.allows(from, URL(string: "ftp://127.0.0.2/secret")!))
        #expect(!policy.allows(from, URL(string: "file:///etc/passwd")!))
        #expect(policy.allows(from, URL(string: "http://127.0.0.1:8080/b")!))
    }

    @Test func aRedirectLoopEndsAtTheBound() async throws {
        let origin = try ScriptedOrigin { request, reply in
            let next = (Int(request.path.dropFirst()) ?? 0) + 1
            reply.respond(status: 302, headers: ["Location": "/\(next)"])
        }
        defer { origin.stop() }
        let http = HTTPOrigin(timeout: .seconds(5), redirects: RedirectPolicy(maxRedirects: 3))
        await #expect(throws: OriginError.tooManyRedirects(limit: 3, url: origin.url("/4"))) {
            _ = try await http.fetch(OriginRequest(url: origin.url("/0")))
        }
        #expect(origin.requests.map(\.path) == ["/0", "/1", "/2", "/3"])
    }

    @Test func theDefaultPolicyBoundsRedirectsToFive() async throws {
        let origin = try ScriptedOrigin { request, reply in
            let next = (Int(request.path.dropFirst()) ?? 0) + 1
            reply.respond(status: 307, headers: ["Location": "/\(next)"])
        }
        defer { origin.stop() }
        await #expect(throws: OriginError.tooManyRedirects(limit: 5, url: origin.url("/6"))) {
            _ = try await HTTPOrigin(timeout: .seconds(5)).fetch(OriginRequest(url: origin.url("/0")))
        }
        #expect(origin.requests.count == 6)
    }

    @Test func credentialsAndCallerHeadersNeverReachAnotherOrigin() async throws {
        let firstPort = PortBox()
        // The other origin sends the request back to the first one.
        let other = try ScriptedOrigin { request, reply in
            reply.respond(status: 302, headers: ["Location": "http://127.0.0.1:\(firstPort.port)/d"])
        }
        defer { other.stop() }
        let otherURL = other.url("/b")
        let first = try ScriptedOrigin { request, reply in
            if request.path == "/a" {
                reply.respond(status: 302, headers: ["Location": otherURL.absoluteString])
            } else {
                reply.serve(Self.content, for: request)
            }
        }
        defer { first.stop() }
        firstPort.port = first.port
        let http = HTTPOrigin(
            timeout: .seconds(5), headers: ["Authorization": "Bearer s", "Cookie": "c=1", "X-Api-Key": "k"])
        let response = try await http.fetch(
            OriginRequest(
                url: first.url("/a"), range: 10..<110, headers: ["Proxy-Authorization": "p", "X-Token": "t"]))
        #expect(response.statusCode == 206)
        #expect(try await body(response) == Self.content.subdata(in: 10..<110))
        let crossed = try #require(other.requests.first)
        #expect(other.requests.count == 1)
        for name in ["Authorization", "Cookie", "Proxy-Authorization", "X-Api-Key", "X-Token"] {
            #expect(crossed.header(name) == nil, "\(name) reached another origin")
        }
        #expect(crossed.range == 10..<110)
        // Back on the first URL's origin, the caller's headers are sent again.
        let back = try #require(first.requests(to: "/d").first)
        #expect(back.header("Authorization") == "Bearer s" && back.header("X-Token") == "t")
    }
}
