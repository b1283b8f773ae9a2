import Foundation
import MediaStore

/// Entry points for the libFuzzer target `FuzzHTTP` in `FuzzTesting/` and
/// the test that replays its corpus: the parsers of what an origin sends
/// (`Content-Range`, `Content-Length`, `Content-Type`, `Cache-Control`,
/// HTTP dates), the `Range` header a request carries, and content-type
/// sniffing. Each must accept or reject any input without crashing, and
/// what it accepts must be consistent. Not API: reachable only with
/// `@_spi(Fuzzing) import MediaStreaming`.
@_spi(Fuzzing) public enum StreamingFuzzing {
    /// Header values, one per line of `bytes` (`Content-Range`,
    /// `Content-Type`, `Content-Length`, `Cache-Control`, `Expires`,
    /// `Date`, `ETag`); the whole input is also the body prefix that
    /// sniffing looks at. Returns whether the `Content-Range` parsed.
    @discardableResult
    public static func parseResponse(_ bytes: [UInt8]) -> Bool {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 7, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        func line(_ index: Int) -> String? { index < lines.count ? lines[index] : nil }
        let names = ["Content-Range", "Content-Type", "Content-Length", "Cache-Control", "Expires", "Date", "ETag"]
        var headers: [String: String] = [:]
        for (index, name) in names.enumerated() { headers[name] = line(index) }
        let response = OriginResponse(statusCode: 206, headers: headers, body: AsyncThrowingStream { $0.finish() })

        let contentRange = line(0).flatMap(ContentRange.init(header:))
        precondition(response.contentRange == contentRange, "Content-Range parses differently through the response")
        if let contentRange { checkContentRange(contentRange) }
        if let length = response.contentLength { precondition(length >= 0, "negative Content-Length") }
        if let lifetime = response.freshnessLifetime { precondition(lifetime >= 0, "negative freshness lifetime") }
        _ = response.etag

        let declared = response.mimeType
        if let declared { precondition(!declared.isEmpty && declared == declared.lowercased(), "MIME type not normalised") }
        // What ResourceFetcher serves: a specific declared type, else the
        // sniffed one; a sniffed media type must map to a real UTI.
        if let declared { _ = UniformType.isGeneric(declared) }
        if let sniffed = MediaSniffer.mimeType(of: bytes.prefix(16)) {
            precondition(MediaSniffer.mimeType(of: bytes) == sniffed, "sniffing looked past 16 bytes")
            precondition(UniformType.identifier(forMIMEType: sniffed) != "public.data" || sniffed.hasPrefix("image/"))
            precondition(!UniformType.isGeneric(sniffed), "a sniffed type counts as generic")
        }
        _ = UniformType.identifier(forMIMEType: line(1) ?? "")
        return contentRange != nil
    }

    /// What a parsed `Content-Range` must satisfy: a non-empty range inside
    /// the total, the canonical form parsing back to the same value, and
    /// the `Range` header asking for exactly those bytes.
    static func checkContentRange(_ parsed: ContentRange) {
        if let total = parsed.total { precondition(total >= 0, "negative total") }
        let totalText = parsed.total.map(String.init) ?? "*"
        guard let range = parsed.range else {
            precondition(ContentRange(header: "bytes */\(totalText)") == parsed, "bytes */total does not round-trip")
            return
        }
        precondition(range.lowerBound >= 0 && !range.isEmpty, "an empty or negative range")
        if let total = parsed.total { precondition(range.upperBound <= total, "a range past the total") }
        let canonical = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(totalText)"
        precondition(ContentRange(header: canonical) == parsed, "\(canonical) does not round-trip")
        let request = OriginRequest(url: URL(fileURLWithPath: "/"), range: range)
        let expected = range.upperBound == Int.max
            ? "bytes=\(range.lowerBound)-" : "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        precondition(request.rangeHeader == expected && request.allHeaders["Range"] == expected, "Range header mismatch")
    }
}
