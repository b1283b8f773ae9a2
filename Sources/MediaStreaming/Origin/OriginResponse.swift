import Foundation

/// An origin's answer: the status, the headers, and the body streamed in
/// pieces as they arrive (never the whole body at once).
public struct OriginResponse: Sendable {
    /// The HTTP status code.
    public var statusCode: Int
    /// The response headers, names lowercased.
    public var headers: [String: String]
    /// The body, piece by piece. Ends normally when the origin finished;
    /// throws an ``OriginError`` when the connection failed. Stop
    /// iterating (or drop it) to abandon the rest.
    public var body: AsyncThrowingStream<Data, any Error>

    public init(statusCode: Int, headers: [String: String], body: AsyncThrowingStream<Data, any Error>) {
        self.statusCode = statusCode
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
    }

    /// The value of a header, by case-insensitive name.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The parsed `Content-Range`, when present and well formed.
    public var contentRange: ContentRange? { header("Content-Range").flatMap(ContentRange.init(header:)) }

    /// `Content-Length`, when present and numeric.
    public var contentLength: Int? {
        header("Content-Length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The `Content-Encoding` of the body, lowercased; `nil` when absent or `identity`.
    public var contentEncoding: String? {
        guard let value = header("Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased(),
            !value.isEmpty, value != "identity"
        else { return nil }
        return value
    }

    /// The `ETag` validator, verbatim.
    public var etag: String? { header("ETag") }

    /// The `Last-Modified` validator, verbatim.
    public var lastModified: String? { header("Last-Modified") }

    /// The MIME type of `Content-Type`, without parameters, lowercased.
    public var mimeType: String? {
        guard let value = header("Content-Type") else { return nil }
        let type = value.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return type.isEmpty ? nil : type
    }

    /// How long the response may be reused, from `Cache-Control: max-age`
    /// (or `s-maxage`), else from `Expires` against `Date`; `nil` when the
    /// origin says nothing. `no-store`/`no-cache` give 0.
    public var freshnessLifetime: TimeInterval? {
        if let control = header("Cache-Control")?.lowercased() {
            let directives = control.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            if directives.contains("no-store") || directives.contains("no-cache") { return 0 }
            for directive in directives where directive.hasPrefix("max-age=") || directive.hasPrefix("s-maxage=") {
                // `max-age=` with nothing after it is malformed, not a crash (found by FuzzHTTP).
                let value = directive.drop { $0 != "=" }.dropFirst()
                if let seconds = Double(value.trimmingCharacters(in: .init(charactersIn: "\" "))) {
                    return max(0, seconds)
                }
            }
        }
        if let expires = header("Expires").flatMap(HTTPDate.parse) {
            let now = header("Date").flatMap(HTTPDate.parse) ?? Date()
            return max(0, expires.timeIntervalSince(now))
        }
        return nil
    }
}
