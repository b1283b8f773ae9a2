import Foundation
import MediaServer
import Testing

/// Allowlist patterns name hosts and ports exactly: a host alone allows its
/// scheme's default port only, `host:port` and `[v6]:port` that port, a
/// wildcard DNS names only; a pattern that can never match is refused.
@Suite("OriginAllowlist")
struct OriginAllowlistTests {
    private func allows(_ patterns: [String], _ url: String) -> Bool {
        OriginAllowlist(patterns).allows(URL(string: url)!)
    }

    @Test func hostAndPortPatterns() {
        #expect(allows(["127.0.0.1:8080"], "http://127.0.0.1:8080/a.mp3"))
        #expect(allows(["127.0.0.1:8080"], "https://127.0.0.1:8080/a.mp3"))
        #expect(!allows(["127.0.0.1:8080"], "http://127.0.0.1:8081/a.mp3"))
        #expect(!allows(["127.0.0.1:8080"], "http://127.0.0.1/a.mp3"))
        #expect(allows(["[::1]:8080"], "http://[::1]:8080/a") && !allows(["[::1]:8080"], "http://[::1]:8081/a"))
        #expect(allows(["[::1]"], "http://[::1]/a") && !allows(["[::1]"], "http://[::1]:8080/a"))
        #expect(allows(["cdn.example.com:8443"], "https://CDN.example.com:8443/a"))
        #expect(allows(["*.example.com:8443"], "https://a.example.com:8443/x"))
        #expect(!allows(["*.example.com:8443"], "https://a.example.com/x"))
    }

    @Test func aHostAloneAllowsTheDefaultPortsOnly() {
        #expect(
            allows(["cdn.example.com"], "http://cdn.example.com/a")
                && allows(["cdn.example.com"], "https://cdn.example.com/a"))
        #expect(allows(["cdn.example.com"], "http://cdn.example.com:80/a"))
        #expect(!allows(["cdn.example.com"], "http://cdn.example.com:8080/a"))
        #expect(!allows(["cdn.example.com"], "http://cdn.example.com:443/a"))
        #expect(!allows(["127.0.0.1"], "http://127.0.0.1:6379/"))
    }

    @Test func oddHostsAndWildcardsOverAddressesNeverMatch() {
        #expect(!allows(["127.0.0.1:8080"], "http://127.1:8080/"))
        #expect(!allows(["127.0.0.1:8080"], "http://2130706433:8080/"))
        #expect(!allows(["127.0.0.1:8080"], "http://0x7f.0.0.1:8080/"))
        #expect(!allows(["127.0.0.1:8080"], "http://[::ffff:127.0.0.1]:8080/"))
        #expect(!allows(["*.0.0.1"], "http://127.0.0.1/"))
        #expect(!allows(["*.example.com"], "http://a.example.com:8080/"))
    }

    @Test func validationRefusesPatternsThatCanNeverMatch() throws {
        for pattern in [
            "", " ", "cdn.example.com/music/", "ftp://cdn.example.com/", "https://user:pw@cdn.example.com/",
            "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:x", "::1", "::1:8080", "[::1", "[::1]x", "127.1", "0x7f.0.0.1",
            "2130706433:8080", "*.0.0.1", "*.com", "*", "a*.example.com", "cdn example.com", "https://a.example/x?y=1",
        ] {
            #expect(throws: OriginAllowlist.InvalidPattern.self, "\(pattern)") {
                try OriginAllowlist(validating: [pattern])
            }
        }
        let valid = try OriginAllowlist(validating: [
            "cdn.example.com", "cdn.example.com:8080", "127.0.0.1:8080", "[::1]:8080", "[::1]", "*.example.com",
            "*.example.com:8443", "https://cdn.example.com/music/", "http://127.0.0.1:8080/x",
        ])
        #expect(valid.patterns.count == 9)
        do {
            _ = try OriginAllowlist(validating: ["cdn.example.com", "::1"])
            Issue.record("::1 accepted")
        } catch {
            #expect(error.pattern == "::1" && error.description.contains("'::1'") && error.description.contains("IPv6"))
        }
    }

    @Test func theRedirectPolicyAppliesTheListOnEveryHop() {
        let policy = OriginAllowlist(["127.0.0.1:8080"]).redirectPolicy(maxRedirects: 2)
        func hop(_ from: String, _ to: String) -> Bool { policy.allows(URL(string: from)!, URL(string: to)!) }
        #expect(policy.maxRedirects == 2)
        #expect(hop("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"))
        #expect(hop("http://127.0.0.1:9000/a", "http://127.0.0.1:9000/b"))  // same origin
        #expect(hop("http://127.0.0.1:9000/a", "http://127.0.0.1:8080/b"))  // allowed target
        #expect(!hop("http://127.0.0.1:8080/a", "http://127.0.0.1:9000/b"))
        #expect(!hop("http://127.0.0.1:8080/a", "http://169.254.169.254/latest"))
        #expect(hop("http://127.0.0.1:8080/a", "https://127.0.0.1:8080/b"))
    }
}
