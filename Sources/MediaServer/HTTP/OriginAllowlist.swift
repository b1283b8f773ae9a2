import Foundation

/// Which origin URLs a ``MediaServer`` may fetch besides the ones it minted
/// with ``MediaServer/url(for:)``, so it is never an open proxy. Pure.
///
/// Patterns:
/// - `cdn.example.com`: that host, `http` or `https`, any port and path;
/// - `*.example.com`: any subdomain of `example.com` (not `example.com` itself);
/// - `https://cdn.example.com/music/`: URLs under that scheme, host, port
///   and path prefix (the prefix ends at a `/` boundary, so `/music`
///   does not allow `/musicals`).
///
/// URLs with a user name or password, or with `.`/`..` path segments
/// (which could climb out of a prefix), are never allowed.
public struct OriginAllowlist: Sendable, Equatable {
    /// The patterns, as given.
    public var patterns: [String]

    public init(_ patterns: [String] = []) { self.patterns = patterns }

    /// Whether `url` matches any pattern.
    public func allows(_ url: URL) -> Bool {
        guard url.user == nil, url.password == nil, let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host?.lowercased(), !host.isEmpty,
            !url.path.split(separator: "/").contains(where: { $0 == "." || $0 == ".." })
        else { return false }
        return patterns.contains { Self.matches($0, url: url, scheme: scheme, host: host) }
    }

    private static func matches(_ pattern: String, url: URL, scheme: String, host: String) -> Bool {
        let pattern = pattern.trimmingCharacters(in: .whitespaces)
        guard !pattern.isEmpty else { return false }
        if pattern.contains("://") {
            guard let prefix = URL(string: pattern), prefix.user == nil, let prefixHost = prefix.host?.lowercased(),
                prefix.scheme?.lowercased() == scheme, prefixHost == host,
                effectivePort(prefix) == effectivePort(url)
            else { return false }
            let base = prefix.path.isEmpty ? "/" : prefix.path
            let path = url.path.isEmpty ? "/" : url.path
            if base.hasSuffix("/") { return path.hasPrefix(base) }
            return path == base || path.hasPrefix(base + "/")
        }
        let lowered = pattern.lowercased()
        if lowered.hasPrefix("*.") {
            return host.hasSuffix(String(lowered.dropFirst())) && host.count > lowered.count - 1
        }
        return host == lowered
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
    }
}
