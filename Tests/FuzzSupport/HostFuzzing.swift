import Foundation
import MediaHLS
import MediaServer
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#endif

/// Entry point for the libFuzzer target `FuzzHost` and the test that
/// replays its corpus: what `HostClass` makes of a URL's host, checked
/// against the C library's own address parsers, and the allowlist's
/// pattern validation. The property that matters for SSRF: a host that a
/// resolver would read as a loopback, link-local, private or unspecified
/// address (in any numeric form `inet_aton` accepts, or as an IPv6 literal)
/// is never classed as public — neither a public address nor a DNS name.
public enum HostFuzzing {
    /// The first line of `bytes` as a host, the second as an allowlist
    /// pattern. Returns whether the host is public (``HostClass/isPublic``).
    @discardableResult
    public static func classify(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 1, omittingEmptySubsequences: false)
        let host = String(decoding: lines.first ?? [], as: UTF8.self)
        let hostClass = HostClass(host: host)
        try fuzzCheck(HostClass(host: host) == hostClass, "the class of \(host) changes between calls")
        if let address = ipv4(host) {
            try fuzzCheck(hostClass != .name, "\(host) is an IPv4 address to a resolver, classed a name")
            if hostClass == .publicAddress {
                try fuzzCheck(!isInternal(v4: address), "\(host) is internal to a resolver, classed public")
            }
        }
        if let address = ipv6(host) {
            try fuzzCheck(hostClass != .name, "\(host) is an IPv6 address, classed a name")
            if hostClass == .publicAddress {
                try fuzzCheck(!isInternal(v6: address), "\(host) is an internal IPv6 address, classed public")
            }
        }
        if hostClass.isPublic, let url = URL(string: "http://\(host)/a") {
            // A URL on a public host: the default playlist rule lets it through only while its host is public.
            try fuzzCheck(
                PlaylistURIRule.publicHosts.refusal(of: url, in: URL(string: "http://127.0.0.1:1/p.m3u8")!) == nil
                    || !HostClass(url: url).isPublic, "a public host refused by the public-hosts rule: \(url)")
        }
        if lines.count > 1 {
            let pattern = String(decoding: lines[1], as: UTF8.self)
            if let allowlist = try? OriginAllowlist(validating: [pattern]), let url = URL(string: "http://\(host)/a"),
                allowlist.allows(url), !HostClass(url: url).isPublic
            {
                // An internal address is allowed only by a pattern naming it and its port exactly.
                try fuzzCheck(
                    pattern.lowercased().contains(url.host?.lowercased() ?? "\u{0}"),
                    "\(url) (internal) allowed by \(pattern)")
            }
        }
        return hostClass.isPublic
    }

    /// The IPv4 address (host order) a resolver reads `host` as, in any form `inet_aton` takes.
    static func ipv4(_ host: String) -> UInt32? {
        guard !host.isEmpty, !host.utf8.contains(0) else { return nil }
        var address = in_addr()
        guard inet_aton(host, &address) != 0 else { return nil }
        return UInt32(bigEndian: address.s_addr)
    }

    /// The 16 bytes of `host` as an IPv6 literal (with or without brackets, no zone).
    static func ipv6(_ host: String) -> [UInt8]? {
        var text = host
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard !text.isEmpty, !text.utf8.contains(0), !text.contains("%") else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Array($0) }
    }

    static func isInternal(v4 address: UInt32) -> Bool {
        let first = address >> 24
        let second = (address >> 16) & 0xFF
        return first == 127 || first == 10 || first == 0 || (first == 169 && second == 254)
            || (first == 172 && (16...31).contains(second)) || (first == 192 && second == 168)
            || (first == 100 && (64...127).contains(second))
    }

    static func isInternal(v6 bytes: [UInt8]) -> Bool {
        let loopback = bytes == [UInt8](repeating: 0, count: 15) + [1]
        let unspecified = bytes.allSatisfy { $0 == 0 }
        let linkLocal = bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80
        let uniqueLocal = bytes[0] & 0xFE == 0xFC
        let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
        let embedded =
            mapped
            ? isInternal(v4: bytes[12..<16].reduce(0) { $0 << 8 | UInt32($1) }) : false
        return loopback || unspecified || linkLocal || uniqueLocal || embedded
    }
}
