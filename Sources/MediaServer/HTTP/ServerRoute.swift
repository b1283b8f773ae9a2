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
    /// Split on the bytes of `/` and `?` (a target the parser passed is printable ASCII).
    public static func resolve(_ target: String, secret: String) -> ServerRoute {
        let bytes = target.utf8
        guard bytes.first == UInt8(ascii: "/") else { return .badTarget }
        let path = bytes[..<(bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex)]
        if path.elementsEqual("/ping".utf8) { return .ping }
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count >= 2, constantTimeEquals(parts[1], secret.utf8) else { return .forbidden }
        if parts.count >= 5, parts[2].elementsEqual("h".utf8), let url = decodeOrigin(bytes: parts[3]) {
            let tag = String(decoding: parts[4], as: UTF8.self)
            guard let route = HLSRoute.parse(origin: url, tag: tag) else { return .notFound }
            return .hls(route)
        }
        guard parts.count >= 4, parts[2].elementsEqual("o".utf8), let url = decodeOrigin(bytes: parts[3]) else {
            return .notFound
        }
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

    /// The origin URL in a base64url path segment (without padding, as
    /// ``encodeOrigin(_:)`` writes it: the unused bits of the last
    /// character are zero), decoded directly: it runs on every request.
    /// `nil` unless it is an absolute `http`/`https` URL with a host and no
    /// control characters, spaces or other bytes outside printable ASCII.
    package static func decodeOrigin(_ text: String) -> URL? {
        decodeOrigin(bytes: text.utf8)
    }

    /// ``decodeOrigin(_:)`` of the segment's bytes.
    private static func decodeOrigin(bytes encoded: some Collection<UInt8>) -> URL? {
        // A length of 4n + 1 characters holds no whole byte in its last one.
        guard !encoded.isEmpty, encoded.count <= 8192, encoded.count % 4 != 1 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(encoded.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for character in encoded {
            guard let value = base64URLValue(character) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                let byte = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                guard byte > 0x20 && byte < 0x7F else { return nil }
                bytes.append(byte)
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }
        let string = String(decoding: bytes, as: UTF8.self)
        guard let url = URL(string: string), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty, url.absoluteString == string
        else { return nil }
        return url
    }

    /// The value of a base64url character (RFC 4648 §5); `nil` for any other byte.
    private static func base64URLValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// Whether the two byte strings are equal, looking at every byte of equal-length ones.
    private static func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
        return difference == 0
    }
}
