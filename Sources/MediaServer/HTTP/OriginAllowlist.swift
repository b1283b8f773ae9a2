import Foundation
import MediaStreaming

/// Which origin URLs a ``MediaServer`` may fetch besides the ones it minted
/// with ``MediaServer/url(for:)``, so it is never an open proxy. Pure.
///
/// Patterns:
/// - `cdn.example.com`: that host, `http` on port 80 or `https` on 443
///   (the scheme's default port only), any path;
/// - `cdn.example.com:8080`, `127.0.0.1:8080`, `[::1]:8080`: that host on
///   that port, `http` or `https`, any path;
/// - `*.example.com` (optionally `:port`): any subdomain of `example.com`
///   (not `example.com` itself), default ports unless a port is given; a
///   wildcard matches DNS names only, never an IP address;
/// - `https://cdn.example.com/music/`: URLs under that scheme, host, port
///   (explicit or default) and path prefix (the prefix ends at a `/`
///   boundary, so `/music` does not allow `/musicals`).
///
/// URLs with a user name or password, with `.`/`..` path segments (which
/// could climb out of a prefix), or whose host is not canonical
/// (`HostClass.nonCanonical`: `127.1`, `0x7f.0.0.1`, `2130706433`…)
/// are never allowed. A loopback, link-local or private address is
/// reached only through a pattern that names it exactly (host and port).
/// Use ``init(validating:)`` for patterns from a user: a pattern that can
/// never match is an error there (``init(_:)`` keeps it, matching nothing).
///
/// The same list judges every redirect hop (``redirectPolicy(maxRedirects:)``)
/// and every URI of a playlist the server rewrites. A master playlist whose
/// variants live on other CDNs needs each of their hosts:
///
/// ```swift
/// let allowlist = try OriginAllowlist(validating: [
///     "https://origin.example.com/live/",   // the masters
///     "cdn-a.example.net", "*.cdn-b.example.org",  // their media playlists and segments
/// ])
/// ```
public struct OriginAllowlist: Sendable, Equatable {
    /// Why a pattern was refused by ``OriginAllowlist/init(validating:)``.
    public struct InvalidPattern: Error, Sendable, Equatable, CustomStringConvertible {
        /// The pattern, as given.
        public var pattern: String
        /// Why it can never match.
        public var reason: String

        public var description: String { "origin pattern '\(pattern)' \(reason)" }
    }

    /// The patterns, as given.
    public var patterns: [String] {
        didSet { rules = Self.rules(patterns) }
    }
    /// The patterns parsed (once: a playlist of thousands of URIs is checked URI by URI).
    private var rules: [Rule]

    /// A list of `patterns`, kept as given; one that can never match matches nothing.
    public init(_ patterns: [String] = []) {
        self.patterns = patterns
        self.rules = Self.rules(patterns)
    }

    private static func rules(_ patterns: [String]) -> [Rule] {
        patterns.compactMap { pattern in
            guard case .success(let rule) = parse(pattern) else { return nil }
            return rule
        }
    }

    /// A list of `patterns`, each checked first.
    ///
    /// - throws: ``InvalidPattern`` for the first pattern that can never
    ///   match (empty, a path without a scheme, a scheme other than `http`
    ///   or `https`, credentials, a query, a port out of 1…65535, a
    ///   non-canonical or IPv6 host without brackets, a wildcard on an
    ///   address or a top-level domain).
    public init(validating patterns: [String]) throws(InvalidPattern) {
        for pattern in patterns {
            if case .failure(let error) = Self.parse(pattern) { throw error }
        }
        self.init(patterns)
    }

    /// Whether `url` matches any pattern.
    public func allows(_ url: URL) -> Bool {
        guard url.user == nil, url.password == nil, let origin = WebOrigin(url),
            HostClass(host: origin.host) != .nonCanonical,
            !url.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." })
        else { return false }
        return rules.contains { $0.matches(url, origin: origin) }
    }

    /// A redirect policy that follows a hop when it stays on the origin it
    /// leaves or when this list allows its target.
    ///
    /// - parameter maxRedirects: hops one request follows at most (default 5).
    public func redirectPolicy(maxRedirects: Int = 5) -> RedirectPolicy {
        let list = self
        return RedirectPolicy.sameOrigin(or: { list.allows($0) }, maxRedirects: maxRedirects)
    }

    /// One parsed pattern.
    private enum Rule: Sendable, Equatable {
        case host(String, port: Int?)
        case subdomains(of: String, port: Int?)
        case prefix(WebOrigin, path: String)

        func matches(_ url: URL, origin: WebOrigin) -> Bool {
            switch self {
            case .host(let host, let port):
                return origin.host == host && Self.portMatches(port, origin)
            case .subdomains(let suffix, let port):
                return HostClass(host: origin.host) == .name && origin.host.hasSuffix("." + suffix)
                    && Self.portMatches(port, origin)
            case .prefix(let prefixOrigin, let base):
                guard prefixOrigin == origin else { return false }
                let path = url.path.isEmpty ? "/" : url.path
                if base.hasSuffix("/") { return path.hasPrefix(base) }
                return path == base || path.hasPrefix(base + "/")
            }
        }

        /// An explicit port must be the URL's; without one, the scheme's default.
        private static func portMatches(_ port: Int?, _ origin: WebOrigin) -> Bool {
            if let port { return origin.port == port }
            return origin.port == WebOrigin.defaultPort(origin.scheme)
        }
    }

    private static func parse(_ raw: String) -> Result<Rule, InvalidPattern> {
        func invalid(_ reason: String) -> Result<Rule, InvalidPattern> {
            .failure(InvalidPattern(pattern: raw, reason: reason))
        }
        let pattern = raw.trimmingCharacters(in: .whitespaces).lowercased()
        guard !pattern.isEmpty else { return invalid("is empty") }
        guard pattern.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return invalid("holds spaces or characters outside ASCII")
        }
        if pattern.contains("://") {
            guard let url = URL(string: pattern), let origin = WebOrigin(url) else {
                return invalid("is not an http or https URL with a host")
            }
            guard url.user == nil, url.password == nil else { return invalid("holds credentials") }
            guard url.query == nil, url.fragment == nil else { return invalid("holds a query or a fragment") }
            guard (1...65535).contains(origin.port) else { return invalid("has a port outside 1-65535") }
            guard HostClass(host: origin.host) != .nonCanonical else { return invalid("has a non-canonical host") }
            return .success(.prefix(origin, path: url.path.isEmpty ? "/" : url.path))
        }
        guard !pattern.contains("/"), !pattern.contains("?"), !pattern.contains("@") else {
            return invalid("has a path, query or user without a scheme (write https://host/path/)")
        }
        var host = pattern
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return invalid("has an unclosed [") }
            let rest = host[host.index(after: close)...]
            host = String(host[host.index(after: host.startIndex)..<close])
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let value = Int(rest.dropFirst()) else {
                    return invalid("has text after ] other than :port")
                }
                port = value
            }
            guard host.contains(":") else { return invalid("has brackets around a host that is not IPv6") }
        } else if let colon = host.lastIndex(of: ":") {
            guard host.firstIndex(of: ":") == colon else {
                return invalid("is an IPv6 address without brackets (write [addr] or [addr]:port)")
            }
            guard let value = Int(host[host.index(after: colon)...]) else { return invalid("has a malformed port") }
            port = value
            host = String(host[..<colon])
        }
        if let port, !(1...65535).contains(port) { return invalid("has a port outside 1-65535") }
        if host.hasPrefix("*.") {
            let suffix = String(host.dropFirst(2))
            guard HostClass(host: suffix) == .name, suffix.contains(".") else {
                return invalid("is a wildcard over an address or a top-level domain")
            }
            return .success(.subdomains(of: suffix, port: port))
        }
        guard !host.contains("*") else { return invalid("has a * other than a leading *.") }
        guard HostClass(host: host) != .nonCanonical, !host.hasSuffix(".") else {
            return invalid("has a non-canonical host (write addresses as 127.0.0.1 or [::1])")
        }
        guard !host.contains("%") else { return invalid("has an IPv6 zone") }
        return .success(.host(host, port: port))
    }
}
