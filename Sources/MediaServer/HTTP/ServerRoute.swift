import Foundation

/// Where a request target leads on a ``MediaServer``. Pure.
///
/// Local URLs look like `/<secret>/o/<origin>/<name>`: the server's
/// secret, then the origin URL in base64url (RFC 4648 §5, no padding),
/// then the origin's last path component, so players that guess the
/// format from the extension see the real one. `/ping` is the health
/// endpoint and needs no secret (it tells nothing).
public enum ServerRoute: Sendable, Equatable {
    case ping
    /// A media request for this origin URL (checked against the allowlist by the server).
    case media(URL)
    /// A resource of an HLS asset (a playlist is served rewritten; see ``HLSRoute``).
    case hls(HLSRoute)
    /// The secret is missing or wrong: 403.
    case forbidden
    /// The secret is right but the rest is not a local URL: 404.
    case notFound
    /// Not an origin-form target: 400.
    case badTarget

    /// The route of `target` for a server whose secret is `secret`.
    public static func resolve(_ target: String, secret: String) -> ServerRoute {
        guard target.hasPrefix("/") else { return .badTarget }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        if path == "/ping" { return .ping }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 2, constantTimeEquals(String(parts[1]), secret) else { return .forbidden }
        if parts.count >= 5, parts[2] == "h", let url = decodeOrigin(String(parts[3])) {
            guard let route = HLSRoute.parse(origin: url, tag: String(parts[4])) else { return .notFound }
            return .hls(route)
        }
        guard parts.count >= 4, parts[2] == "o", let url = decodeOrigin(String(parts[3])) else { return .notFound }
        return .media(url)
    }

    /// The path of the local URL for `origin` (without scheme and host).
    public static func path(for origin: URL, secret: String) -> String {
        let name = origin.lastPathComponent.addingPercentEncoding(withAllowedCharacters: nameCharacters)
        let last = (name?.isEmpty ?? true) || name == "/" ? "media" : name!
        return "/\(secret)/o/\(encodeOrigin(origin))/\(last)"
    }

    /// The characters a local URL's last path component keeps unescaped.
    package static let nameCharacters = CharacterSet.urlPathAllowed.subtracting(["/", ";", "?"])

    private static let base64URLAlphabet = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The origin URL in base64url without padding (RFC 4648 §5), written
    /// directly: a playlist of hundreds of segments mints as many.
    package static func encodeOrigin(_ url: URL) -> String {
        let bytes = Array(url.absoluteString.utf8)
        var output = [UInt8]()
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { output.append(base64URLAlphabet[Int(value >> UInt32(shift) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var value = UInt32(bytes[index]) << 16
            if rest == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            for shift in [18, 12, 6].prefix(rest + 1) {
                output.append(base64URLAlphabet[Int(value >> UInt32(shift) & 63)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The origin URL in a base64url path segment; `nil` unless it is an
    /// absolute `http`/`https` URL with a host and no control characters or spaces.
    package static func decodeOrigin(_ text: String) -> URL? {
        guard !text.isEmpty, text.count <= 8192,
            text.utf8.allSatisfy({ HTTPRequestParser.isTokenByte($0) && $0 != UInt8(ascii: "+") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        let string = String(decoding: data, as: UTF8.self)
        guard string.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let url = URL(string: string),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.absoluteString == string
        else { return nil }
        return url
    }

    package static func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
        let a = Array(lhs.utf8)
        let b = Array(rhs.utf8)
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
