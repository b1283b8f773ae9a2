import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the host of a URL names, from its text alone (no DNS lookup).
/// Pure.
///
/// An IPv4 host must be written as four decimal numbers from 0 to 255
/// without leading zeros (`127.0.0.1`); the other forms resolvers accept
/// (`127.1`, `0x7f.0.0.1`, `0177.0.0.1`, `2130706433`) are
/// ``nonCanonical``, as is any host with characters a DNS name or an IPv6
/// literal cannot hold. A host whose last label is numeric is read as an
/// IPv4 address (as browsers do), never as a name. IPv6 literals that
/// embed an IPv4 address (`::ffff:127.0.0.1`, `::127.0.0.1`,
/// `64:ff9b::127.0.0.1`) are classed by that address; one with a zone
/// (`fe80::1%eth0`) is ``linkLocal``. `localhost`, `*.localhost` and the
/// names Linux's `/etc/hosts` gives the loopback addresses
/// (`localhost.localdomain`, `localhost6`, `ip6-localhost`, `ip6-loopback`…) are
/// ``loopback``. A DNS name is a ``name`` whatever it resolves to.
public enum HostClass: Sendable, Hashable, CustomStringConvertible {
    /// A DNS name (other than `localhost`).
    case name
    /// A literal address reachable on the internet.
    case publicAddress
    /// `127.0.0.0/8`, `::1`, `localhost`.
    case loopback
    /// `169.254.0.0/16` (cloud metadata services), `fe80::/10`.
    case linkLocal
    /// `10/8`, `172.16/12`, `192.168/16`, `100.64/10`, `fc00::/7`.
    case privateNetwork
    /// `0.0.0.0/8`, `::`.
    case unspecified
    /// Multicast, broadcast and reserved ranges (`224/4`, `240/4`, `ff00::/8`).
    case reserved
    /// A numeric host in a form other than dotted decimal, or characters no host may hold.
    case nonCanonical

    /// Host names that are the loopback address on common systems.
    static let loopbackNames: Set<String> = [
        "localhost", "localhost.localdomain", "localhost4", "localhost4.localdomain4", "localhost6",
        "localhost6.localdomain6", "ip6-localhost", "ip6-loopback",
    ]

    /// The class of `url`'s host; ``nonCanonical`` when it has none.
    public init(url: URL) {
        self.init(host: url.host ?? "")
    }

    /// The class of `host` as `URL.host` gives it (IPv6 without brackets).
    public init(host: String) {
        var text = host.lowercased()
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        guard !text.isEmpty, text.utf8.count <= 253 else {
            self = .nonCanonical
            return
        }
        if text.contains(":") {
            self = Self.classifyIPv6(text)
            return
        }
        if text.hasSuffix(".") { text.removeLast() }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !labels.contains(where: \.isEmpty),
            text.utf8.allSatisfy({ Self.nameBytes.contains($0) })
        else {
            self = .nonCanonical
            return
        }
        if let last = labels.last, Self.looksNumeric(last) {
            guard let address = Self.canonicalIPv4(labels) else {
                self = .nonCanonical
                return
            }
            self = Self.classifyIPv4(address)
            return
        }
        if text.hasSuffix(".localhost") || Self.loopbackNames.contains(text) {
            self = .loopback
            return
        }
        self = .name
    }

    /// Whether it is a DNS name or a public address: the hosts a rule may
    /// reach without naming them exactly.
    public var isPublic: Bool { self == .name || self == .publicAddress }

    public var description: String {
        switch self {
        case .name: "a host name"
        case .publicAddress: "a public address"
        case .loopback: "a loopback address"
        case .linkLocal: "a link-local address"
        case .privateNetwork: "a private-network address"
        case .unspecified: "an unspecified address"
        case .reserved: "a reserved address"
        case .nonCanonical: "a host in a non-canonical form"
        }
    }

    private static let nameBytes = Set(Array("abcdefghijklmnopqrstuvwxyz0123456789-._".utf8))

    /// Whether a last label makes the host an IPv4 address (decimal digits, or `0x` and hex digits).
    private static func looksNumeric(_ label: Substring) -> Bool {
        if label.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
        guard label.hasPrefix("0x") else { return false }
        return label.dropFirst(2).utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The address of four canonical decimal labels; nil for any other form.
    private static func canonicalIPv4(_ labels: [Substring]) -> UInt32? {
        guard labels.count == 4 else { return nil }
        var address: UInt32 = 0
        for label in labels {
            guard label.utf8.count <= 3, label.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                label == "0" || !label.hasPrefix("0"), let value = UInt32(label), value <= 255
            else { return nil }
            address = address << 8 | value
        }
        return address
    }

    private static func classifyIPv4(_ address: UInt32) -> HostClass {
        func within(_ prefix: UInt32, _ bits: UInt32) -> Bool { address >> (32 - bits) == prefix >> (32 - bits) }
        if within(0x7F00_0000, 8) { return .loopback }
        if within(0x0000_0000, 8) { return .unspecified }
        if within(0xA9FE_0000, 16) { return .linkLocal }
        if within(0x0A00_0000, 8) || within(0xAC10_0000, 12) || within(0xC0A8_0000, 16) || within(0x6440_0000, 10) {
            return .privateNetwork
        }
        if within(0xE000_0000, 4) || within(0xF000_0000, 4) { return .reserved }
        return .publicAddress
    }

    private static func classifyIPv6(_ text: String) -> HostClass {
        if text.contains("%") { return .linkLocal }  // a zone only means something on a local link
        guard text.utf8.allSatisfy({ Self.ipv6Bytes.contains($0) }) else { return .nonCanonical }
        var raw = in6_addr()
        guard inet_pton(AF_INET6, text, &raw) == 1 else { return .nonCanonical }
        let bytes = withUnsafeBytes(of: raw) { Array($0) }
        let embedded = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        if bytes[0..<15].allSatisfy({ $0 == 0 }) {
            if bytes[15] == 0 { return .unspecified }
            if bytes[15] == 1 { return .loopback }
        }
        // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d).
        if bytes[0..<10].allSatisfy({ $0 == 0 })
            && (bytes[10..<12].allSatisfy({ $0 == 0xFF })
                || bytes[10..<12].allSatisfy({ $0 == 0 }))
        {
            return classifyIPv4(embedded)
        }
        if bytes[0..<12].elementsEqual([0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) { return classifyIPv4(embedded) }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return .linkLocal }
        if bytes[0] & 0xFE == 0xFC { return .privateNetwork }
        if bytes[0] == 0xFF { return .reserved }
        return .publicAddress
    }

    private static let ipv6Bytes = Set(Array("0123456789abcdef:.".utf8))
}
