import MediaStreaming

/// Whether a request was meant for this server, from its `Host` field:
/// the guard against DNS rebinding (a page whose name was made to resolve
/// to this server still sends its own name as `Host`). Pure.
///
/// Accepted: the advertised host and port; when the server listens on
/// loopback only, also `127.0.0.1:port`, `localhost:port` and
/// `[::1]:port`; when it listens on every interface, any IP address
/// literal (`192.168.1.20:port`, `[fd00::20]:port`) or loopback name with
/// that port — the address a LAN device dialled — but never another DNS
/// name. Names compare without case. A request with another `Host` is
/// ``Verdict/misdirected(_:)`` (421); an HTTP/1.1 request with no `Host`, or
/// any request with several or an empty one, is ``Verdict/malformed(_:)``
/// (400, RFC 9112 §3.2). An HTTP/1.0 request without `Host` is accepted
/// (that version has none).
public struct HostCheck: Sendable, Equatable {
    /// What a request's `Host` says.
    public enum Verdict: Sendable, Equatable {
        case accepted
        /// Another host or port: 421 with this reason.
        case misdirected(String)
        /// Missing, repeated or empty: 400 with this reason.
        case malformed(String)
    }

    /// The `host:port` values accepted, lowercased.
    public let accepted: Set<String>
    /// The port every accepted `Host` names.
    public let port: Int
    /// Whether any address literal with ``port`` is accepted (the server listens on every interface).
    public let acceptsAddresses: Bool

    /// - parameter advertisedHost: the host minted URLs name (``MediaServerConfiguration/advertisedHost``).
    /// - parameter port: the port the server listens on.
    /// - parameter loopbackOnly: whether it listens on loopback only (else address literals are accepted too).
    public init(advertisedHost: String, port: Int, loopbackOnly: Bool) {
        var hosts = [
            advertisedHost.contains(":") && !advertisedHost.hasPrefix("[") ? "[\(advertisedHost)]" : advertisedHost
        ]
        hosts += ["127.0.0.1", "localhost", "[::1]"]
        accepted = Set(hosts.map { "\($0.lowercased()):\(port)" })
        self.port = port
        acceptsAddresses = !loopbackOnly
    }

    /// The verdict on `request`.
    public func check(_ request: HTTPRequest) -> Verdict {
        let values = request.headers(named: "Host")
        guard values.count <= 1 else { return .malformed("several Host fields") }
        guard let value = values.first?.trimmingOWS() else {
            return request.minorVersion >= 1 ? .malformed("no Host field") : .accepted
        }
        guard !value.isEmpty else { return .malformed("an empty Host field") }
        guard accepted.contains(value.lowercased()) || (acceptsAddresses && isAddressLiteral(value)) else {
            return .misdirected("Host '\(value.prefix(100))' is not this server")
        }
        return .accepted
    }

    /// Whether `value` is an IP address literal (not a DNS name) with ``port``.
    private func isAddressLiteral(_ value: String) -> Bool {
        guard let colon = value.lastIndex(of: ":"), value[value.index(after: colon)...] == String(port) else {
            return false
        }
        let host = String(value[..<colon])
        if host.hasPrefix("[") { return host.hasSuffix("]") && HostClass(host: host) != .nonCanonical }
        return !host.contains(":") && ![.name, .nonCanonical].contains(HostClass(host: host))
            && !host.lowercased().hasSuffix("localhost") && !host.hasSuffix(".")
    }
}
