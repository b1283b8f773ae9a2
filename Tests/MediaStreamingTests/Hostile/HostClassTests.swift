import Foundation
import MediaHLS
import MediaStreaming
import Testing

/// Hosts are classed from their text alone; every numeric form other than
/// dotted decimal is refused as non-canonical, and IPv6 literals that embed
/// an IPv4 address are classed by that address.
@Suite("HostClass")
struct HostClassTests {
    private func classOf(_ text: String) -> HostClass { HostClass(url: URL(string: text)!) }

    @Test func ipv4() {
        #expect(classOf("http://127.0.0.1/") == .loopback)
        #expect(classOf("http://127.255.3.4:8080/") == .loopback)
        #expect(classOf("http://169.254.169.254/latest/meta-data") == .linkLocal)
        #expect(classOf("http://10.1.2.3/") == .privateNetwork)
        #expect(
            classOf("http://172.16.0.1/") == .privateNetwork && classOf("http://172.31.255.255/") == .privateNetwork)
        #expect(classOf("http://172.32.0.1/") == .publicAddress && classOf("http://172.15.0.1/") == .publicAddress)
        #expect(classOf("http://192.168.1.1/") == .privateNetwork)
        #expect(classOf("http://100.64.0.1/") == .privateNetwork)
        #expect(classOf("http://0.0.0.0/") == .unspecified)
        #expect(classOf("http://224.0.0.1/") == .reserved && classOf("http://255.255.255.255/") == .reserved)
        #expect(classOf("http://93.184.216.34/") == .publicAddress)
        #expect(classOf("http://127.0.0.1./") == .loopback)
    }

    @Test func oddNumericFormsAreRefused() {
        for text in [
            "http://127.1/", "http://0x7f.0.0.1/", "http://0177.0.0.1/", "http://2130706433/", "http://0x7f000001/",
            "http://127.0.0.01/", "http://127.0.0.256/", "http://1.2.3.4.5/", "http://127.0.1/", "http://017700000001/",
            "http://1.2.3.0x4/",
        ] {
            #expect(classOf(text) == .nonCanonical, "\(text)")
            #expect(!classOf(text).isPublic)
        }
    }

    @Test func ipv6() {
        #expect(classOf("http://[::1]:8080/") == .loopback)
        #expect(classOf("http://[0:0:0:0:0:0:0:1]/") == .loopback)
        #expect(classOf("http://[::]/") == .unspecified)
        #expect(classOf("http://[::ffff:127.0.0.1]/") == .loopback)
        #expect(classOf("http://[::ffff:7f00:1]/") == .loopback)
        #expect(classOf("http://[::ffff:169.254.169.254]/") == .linkLocal)
        #expect(classOf("http://[::127.0.0.1]/") == .loopback)
        #expect(classOf("http://[64:ff9b::10.0.0.1]/") == .privateNetwork)
        #expect(classOf("http://[fe80::1]/") == .linkLocal && classOf("http://[febf::1]/") == .linkLocal)
        #expect(classOf("http://[fe80::1%25eth0]/") == .linkLocal)
        #expect(classOf("http://[fd00::1]/") == .privateNetwork && classOf("http://[fc12::1]/") == .privateNetwork)
        #expect(classOf("http://[ff02::1]/") == .reserved)
        #expect(classOf("http://[2001:db8::1]/") == .publicAddress)
        #expect(HostClass(host: "::1::2") == .nonCanonical)
    }

    @Test func names() {
        #expect(classOf("http://cdn.example.com/") == .name && classOf("http://CDN.Example.com./") == .name)
        #expect(classOf("http://localhost:8080/") == .loopback && classOf("http://LOCALHOST./") == .loopback)
        #expect(classOf("http://a.localhost/") == .loopback)
        for name in ["localhost.localdomain", "localhost6", "ip6-localhost", "IP6-LOOPBACK", "localhost4"] {
            #expect(classOf("http://\(name):8080/") == .loopback, "\(name)")
        }
        #expect(classOf("http://1.example.com/") == .name && classOf("http://example.123abc/") == .name)
        #expect(HostClass(host: "") == .nonCanonical && HostClass(host: "a..b") == .nonCanonical)
        #expect(HostClass(host: "exa mple.com") == .nonCanonical && HostClass(host: "a%2eb") == .nonCanonical)
        #expect(HostClass.name.isPublic && HostClass.publicAddress.isPublic && !HostClass.loopback.isPublic)
    }

    @Test func sameOrigin() {
        func same(_ a: String, _ b: String) -> Bool { WebOrigin.same(URL(string: a)!, URL(string: b)!) }
        #expect(same("http://a.example/x", "http://A.example:80/y"))
        #expect(same("https://a.example/x", "https://a.example:443/y"))
        #expect(!same("http://a.example/x", "https://a.example/x"))
        #expect(!same("http://127.0.0.1:8080/x", "http://127.0.0.1:8081/x"))
        #expect(!same("http://a.example/x", "http://b.a.example/x"))
        #expect(!same("data:text/plain,x", "data:text/plain,x"))
    }

    @Test func playlistURIRule() {
        let playlist = URL(string: "http://127.0.0.1:8080/live/master.m3u8")!
        let rule = PlaylistURIRule.publicHosts
        func refused(_ text: String) -> Bool { rule.refusal(of: URL(string: text)!, in: playlist) != nil }
        #expect(!refused("http://127.0.0.1:8080/live/a.ts"))
        #expect(refused("http://127.0.0.1:8081/a.ts") && refused("http://localhost:8080/a.ts"))
        #expect(refused("http://169.254.169.254/latest") && refused("http://[::ffff:169.254.169.254]/x"))
        #expect(refused("http://2130706433:8080/a.ts") && refused("http://10.0.0.1/a.ts"))
        #expect(!refused("https://cdn.example.com/a.ts") && !refused("data:text/plain,x"))
        let strict = PlaylistURIRule { $0.host == "cdn.example.com" }
        #expect(strict.refusal(of: URL(string: "https://cdn.example.com/a.ts")!, in: playlist) == nil)
        #expect(strict.refusal(of: URL(string: "https://other.example.com/a.ts")!, in: playlist) != nil)
    }
}
