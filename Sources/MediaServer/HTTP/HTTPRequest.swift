/// One parsed HTTP/1.x request head (RFC 9112 §3, §5). The server takes
/// no request bodies, so a request is only its head.
public struct HTTPRequest: Sendable, Equatable {
    /// The method, case-sensitive as sent (`GET`, `HEAD`, …).
    public var method: String
    /// The request target as sent (origin form: `/path?query`).
    public var target: String
    /// The minor version: 1 for `HTTP/1.1`, 0 for `HTTP/1.0`.
    public var minorVersion: Int
    /// The header fields in order, names as sent.
    public var headers: [(name: String, value: String)]

    public init(method: String, target: String, minorVersion: Int = 1, headers: [(name: String, value: String)] = []) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.headers = headers
    }

    /// The value of the first field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    /// Every value of the fields named `name`, in order.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Whether the connection stays open after the response (RFC 9112 §9.3):
    /// HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepsAlive: Bool {
        let options = headers(named: "Connection").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingOWS().lowercased() }
        if options.contains("close") { return false }
        return minorVersion >= 1 || options.contains("keep-alive")
    }

    public static func == (lhs: HTTPRequest, rhs: HTTPRequest) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.minorVersion == rhs.minorVersion
            && lhs.headers.map(\.name) == rhs.headers.map(\.name)
            && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }
}

extension String {
    /// Whether the two are equal but for the case of ASCII letters (field
    /// names are tokens, RFC 9110 §5.1); other bytes must be equal. No
    /// allocation: it runs for every field of a request at each look-up.
    package func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && utf8.elementsEqual(other.utf8) { Self.asciiLower($0) == Self.asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
