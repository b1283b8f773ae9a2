import Foundation

/// The origin of a URL in the web's sense: scheme, host and port (the
/// scheme's default port when the URL names none). Two URLs are on the
/// same origin when these three are equal; credentials, redirects and
/// playlist URIs are judged by it. Pure.
public struct WebOrigin: Sendable, Hashable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public var scheme: String
    /// The host, lowercased, without brackets.
    public var host: String
    /// The port, explicit or the scheme's default (80, 443).
    public var port: Int

    /// The origin of `url`; nil unless it is an `http` or `https` URL with a host.
    public init?(_ url: URL) {
        // An explicit port does not make another scheme (`ftp://host:21`) a web origin.
        guard let scheme = url.scheme?.lowercased(), let defaultPort = Self.defaultPort(scheme),
            let host = url.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = url.port ?? defaultPort
    }

    /// 80 for `http`, 443 for `https`, nil for other schemes.
    public static func defaultPort(_ scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// Whether `a` and `b` are both `http(s)` URLs on one origin.
    public static func same(_ a: URL, _ b: URL) -> Bool {
        guard let first = WebOrigin(a), let second = WebOrigin(b) else { return false }
        return first == second
    }

    public var description: String {
        "\(scheme)://\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
