import Foundation
import MediaStore
import MediaStreaming

/// Entry points for the libFuzzer target `FuzzHTTP` in `FuzzTesting/` and
/// the test that replays its corpus: the parsers of what an origin sends
/// (`Content-Range`, `Content-Length`, `Content-Type`, `Cache-Control`,
/// HTTP dates), the `Range` header a request carries, and content-type
/// sniffing. Each must accept or reject any input without crashing, and
/// what it accepts must be consistent; a property that does not hold
/// throws ``FuzzFailure``.
public enum StreamingFuzzing {
    /// Header values, one per line of `bytes` (`Content-Range`,
    /// `Content-Type`, `Content-Length`, `Cache-Control`, `Expires`,
    /// `Date`, `ETag`); the whole input is also the body prefix that
    /// sniffing looks at. Returns whether the `Content-Range` parsed.
    @discardableResult
    public static func parseResponse(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 7, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        func line(_ index: Int) -> String? { index < lines.count ? lines[index] : nil }
        let names = ["Content-Range", "Content-Type", "Content-Length", "Cache-Control", "Expires", "Date", "ETag"]
        var headers: [String: String] = [:]
        for (index, name) in names.enumerated() { headers[name] = line(index) }
        let response = OriginResponse(statusCode: 206, headers: headers, body: AsyncThrowingStream { $0.finish() })

        let contentRange = line(0).flatMap(ContentRange.init(header:))
        try fuzzCheck(response.contentRange == contentRange, "Content-Range parses differently through the response")
        if let contentRange { try checkContentRange(contentRange) }
        if let length = response.contentLength { try fuzzCheck(length >= 0, "negative Content-Length") }
        if let lifetime = response.freshnessLifetime { try fuzzCheck(lifetime >= 0, "negative freshness lifetime") }
        _ = response.etag

        let declared = response.mimeType
        if let declared {
            try fuzzCheck(!declared.isEmpty && declared == declared.lowercased(), "MIME type not normalised")
        }
        // What ResourceFetcher serves: a specific declared type, else the
        // sniffed one; a sniffed media type must map to a real UTI.
        if let declared { _ = UniformType.isGeneric(declared) }
        if let sniffed = MediaSniffer.mimeType(of: bytes.prefix(16)) {
            try fuzzCheck(MediaSniffer.mimeType(of: bytes) == sniffed, "sniffing looked past 16 bytes")
            try fuzzCheck(
                UniformType.identifier(forMIMEType: sniffed) != "public.data" || sniffed.hasPrefix("image/"),
                "a sniffed media type has no UTI")
            try fuzzCheck(!UniformType.isGeneric(sniffed), "a sniffed type counts as generic")
        }
        _ = UniformType.identifier(forMIMEType: line(1) ?? "")
        return contentRange != nil
    }

    /// What a parsed `Content-Range` must satisfy: a non-empty range inside
    /// the total, the canonical form parsing back to the same value, and
    /// the `Range` header asking for exactly those bytes.
    static func checkContentRange(_ parsed: ContentRange) throws(FuzzFailure) {
        if let total = parsed.total { try fuzzCheck(total >= 0, "negative total") }
        let totalText = parsed.total.map(String.init) ?? "*"
        guard let range = parsed.range else {
            try fuzzCheck(ContentRange(header: "bytes */\(totalText)") == parsed, "bytes */total does not round-trip")
            return
        }
        try fuzzCheck(range.lowerBound >= 0 && !range.isEmpty, "an empty or negative range")
        if let total = parsed.total { try fuzzCheck(range.upperBound <= total, "a range past the total") }
        let canonical = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(totalText)"
        try fuzzCheck(ContentRange(header: canonical) == parsed, "\(canonical) does not round-trip")
        let request = OriginRequest(url: URL(fileURLWithPath: "/"), range: range)
        let expected =
            range.upperBound == Int.max
            ? "bytes=\(range.lowerBound)-" : "bytes=\(range.lowerBound)-\(range.upperBound - 1)"
        try fuzzCheck(
            request.rangeHeader == expected && request.allHeaders["Range"] == expected, "Range header mismatch")
    }

    /// Arbitrary bytes as the first bytes of a media file (FuzzPlaybackPrefix):
    /// the first byte picks the seconds asked for (low 7 bits, quarters)
    /// and whether the length is known (high bit). `PlaybackPrefix` must
    /// never name more than the file, and a request for more must ask for
    /// more than it was given (a preloader would otherwise loop). Returns
    /// whether it named a length.
    @discardableResult
    public static func estimatePlaybackPrefix(_ input: [UInt8]) throws(FuzzFailure) -> Bool {
        guard let selector = input.first else { return false }
        let bytes = Array(input.dropFirst())
        let total: Int? = selector & 0x80 != 0 ? bytes.count : nil
        switch PlaybackPrefix.estimate(toPlay: Double(selector & 0x7F) / 4, prefix: bytes, totalLength: total) {
        case .length(let length, _):
            try fuzzCheck(length >= 0 && length <= (total ?? .max), "a prefix of \(length) bytes of \(bytes.count)")
            return true
        case .needsPrefix(let length):
            try fuzzCheck(length > bytes.count, "asks for \(length) bytes having \(bytes.count)")
        case .needsRange(let range):
            try fuzzCheck(!range.isEmpty, "asks for an empty range")
        case .unsupported: break
        }
        return false
    }
}
