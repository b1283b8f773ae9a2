import Foundation
import MediaServer
import MediaStreaming
import Testing

/// The server answers only requests whose `Host` is its own (the DNS
/// rebinding guard, beside the secret): the advertised host and port, and
/// the loopback names when it listens on loopback.
@Suite("Host header")
struct HostHeaderTests {
    private func request(_ host: String?, minorVersion: Int = 1) -> HTTPRequest {
        HTTPRequest(
            method: "GET", target: "/ping", minorVersion: minorVersion, headers: host.map { [("Host", $0)] } ?? [])
    }

    @Test func acceptsTheAdvertisedHostAndLoopbackNames() {
        let check = HostCheck(advertisedHost: "127.0.0.1", port: 8765, loopbackOnly: true)
        for host in ["127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765", " 127.0.0.1:8765 "] {
            #expect(check.check(request(host)) == .accepted, "\(host)")
        }
        #expect(check.check(request(nil, minorVersion: 0)) == .accepted)
    }

    @Test func refusesOtherHostsAndPorts() {
        let check = HostCheck(advertisedHost: "127.0.0.1", port: 8765, loopbackOnly: true)
        for host in [
            "evil.example:8765", "127.0.0.1", "127.0.0.1:8766", "localhost", "127.0.0.1:8765.evil.example",
            "127.1:8765", "[::ffff:127.0.0.1]:8765", "evil.example",
        ] {
            #expect(isMisdirected(check.check(request(host))), "\(host)")
        }
        #expect(isMalformed(check.check(request(nil))))
        #expect(isMalformed(check.check(request(""))))
        let twice = HTTPRequest(
            method: "GET", target: "/ping", headers: [("Host", "127.0.0.1:8765"), ("Host", "127.0.0.1:8765")])
        #expect(isMalformed(check.check(twice)))
    }

    private func isMisdirected(_ verdict: HostCheck.Verdict) -> Bool {
        if case .misdirected = verdict { return true }
        return false
    }

    private func isMalformed(_ verdict: HostCheck.Verdict) -> Bool {
        if case .malformed = verdict { return true }
        return false
    }

    @Test func onEveryInterfaceAddressesAreAcceptedButNotNames() {
        let check = HostCheck(advertisedHost: "192.168.1.20", port: 8765, loopbackOnly: false)
        for host in ["192.168.1.20:8765", "10.0.0.7:8765", "127.0.0.1:8765", "localhost:8765", "[fd00::20]:8765"] {
            #expect(check.check(request(host)) == .accepted, "\(host)")
        }
        for host in ["evil.example:8765", "192.168.1.20:8766", "10.0.0.7", "127.1:8765", "a.localhost.evil:8765"] {
            #expect(isMisdirected(check.check(request(host))), "\(host)")
        }
        let named = HostCheck(advertisedHost: "mac.local", port: 80, loopbackOnly: false)
        #expect(named.check(request("MAC.local:80")) == .accepted && isMisdirected(named.check(request("pc.local:80"))))
    }

    @Test func aRebindingRequestGets421OnTheWire() async throws {
        let fixture = try AllowlistedServer(allowlist: OriginAllowlist())
        let port = try #require(fixture.server.port)
        func answer(_ head: String) async throws -> String {
            let client = try RawClient(port: port)
            client.send(head)
            return await client.readToEnd()
        }
        let rebound = try await answer("GET /ping HTTP/1.1\r\nHost: evil.example:\(port)\r\nConnection: close\r\n\r\n")
        #expect(RawClient.status(rebound) == 421 && rebound.contains("is not this server"))
        let wrongPort = try await answer("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:1\r\nConnection: close\r\n\r\n")
        #expect(RawClient.status(wrongPort) == 421)
        let missing = try await answer("GET /ping HTTP/1.1\r\n\r\n")
        #expect(RawClient.status(missing) == 400)
        let local = try await answer("GET /ping HTTP/1.1\r\nHost: localhost:\(port)\r\nConnection: close\r\n\r\n")
        #expect(RawClient.status(local) == 200)
        let old = try await answer("GET /ping HTTP/1.0\r\n\r\n")
        #expect(old.hasPrefix("HTTP/1.1 200"))
    }
}
