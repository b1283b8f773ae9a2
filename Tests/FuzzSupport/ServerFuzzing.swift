import Foundation
import MediaServer

/// The entry point of the libFuzzer target `FuzzServerRequest` in
/// `FuzzTesting/` and of the test that replays its corpus: arbitrary
/// bytes as a request head, through everything the server does with a
/// head before it touches a socket or the loader. Test code, in no
/// product (reaches MediaServer's `package` internals).
public enum ServerFuzzing {
    static let secret = "0123456789abcdef0123456789abcdef"

    /// Parses `bytes` as a request head (small limits, so the limit paths
    /// are reached), routes it, plans its answer for representations of a
    /// few lengths and checks what must hold. Returns whether a head parsed.
    @discardableResult
    public static func parseRequest(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let limits = HTTPLimits(maxRequestLineBytes: 512, maxHeadBytes: 2048, maxHeaderCount: 16)
        // The Range parser and the allowlist also see the raw input.
        try checkRange(String(decoding: bytes.prefix(256), as: UTF8.self))
        let parsed: (request: HTTPRequest, consumed: Int)?
        do throws(HTTPParseError) {
            parsed = try HTTPRequestParser.parse(bytes, limits: limits)
        } catch {
            try fuzzCheck([400, 413, 414, 431, 501, 505].contains(error.status), "unexpected status \(error.status)")
            return false
        }
        guard let (request, consumed) = parsed else {
            try fuzzCheck(
                bytes.count <= limits.maxHeadBytes + limits.maxRequestLineBytes + 2,
                "an over-long head was left pending")
            return false
        }
        try fuzzCheck(consumed > 0 && consumed <= bytes.count, "consumed \(consumed) of \(bytes.count)")
        try fuzzCheck(request.headers.count <= limits.maxHeaderCount, "too many headers accepted")
        try fuzzCheck(!request.target.utf8.contains { $0 <= 0x20 || $0 == 0x7F }, "space or control in the target")
        for (name, value) in request.headers {
            try fuzzCheck(
                !name.isEmpty && name.utf8.allSatisfy(HTTPRequestParser.isTokenByte), "bad header name \(name)")
            try fuzzCheck(!value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }, "CR, LF or NUL in a header value")
        }
        // Parsing the same bytes again gives the same request (no hidden state).
        try fuzzCheck(
            (try? HTTPRequestParser.parse(bytes, limits: limits))?.request == request, "parse is not deterministic")

        switch ServerRoute.resolve(request.target, secret: secret) {
        case .media(let url):
            let scheme = url.scheme?.lowercased()
            try fuzzCheck(scheme == "http" || scheme == "https", "a non-HTTP origin routed")
            try fuzzCheck(
                ServerRoute.resolve(ServerRoute.path(for: url, secret: secret), secret: secret) == .media(url),
                "a minted path does not route back")
            _ = OriginAllowlist(["example.com", "*.example.org", "https://cdn.example.net/music/"]).allows(url)
        case .hls(let route):
            let scheme = route.origin.scheme?.lowercased()
            try fuzzCheck(scheme == "http" || scheme == "https", "a non-HTTP HLS origin routed")
            try fuzzCheck(
                ServerRoute.resolve(route.path(secret: secret), secret: secret) == .hls(route),
                "a minted HLS path does not route back")
        case .ping, .forbidden, .notFound, .badTarget:
            break
        }
        // The lengths include the 64-bit boundaries: no range arithmetic may trap there.
        for length in [0, 1, 100, 1 << 20, Int.max - 1, Int.max] {
            let representation = Representation(
                length: length, mimeType: request.header("Content-Type") ?? "audio/mpeg",
                etag: request.header("X-ETag"),
                lastModified: request.header("X-Last-Modified"))
            for method in ["GET", "HEAD"] {
                let plan = ResponsePlanner.plan(method: method, request: request, representation: representation)
                try checkRangePlan(plan, length: length)
                if let body = plan.body {
                    try fuzzCheck(body.lowerBound >= 0 && body.upperBound <= length, "body outside the representation")
                    try fuzzCheck(
                        plan.head.value("Content-Length") == String(body.count), "Content-Length differs from the body")
                    try fuzzCheck(method == "GET", "a body for HEAD")
                }
                let head = plan.head.serialized()
                let text = String(decoding: head, as: UTF8.self)
                try fuzzCheck(
                    text.hasSuffix("\r\n\r\n") && text.components(separatedBy: "\r\n\r\n").count == 2, "head injection")
                let lineFeeds = head.filter { $0 == 10 }.count
                try fuzzCheck(lineFeeds == plan.head.fields.count + 2, "a field spans lines")
                try fuzzCheck(head.filter { $0 == 13 }.count == lineFeeds, "a bare CR or LF in the head")
            }
        }
        return true
    }

    /// The entry point of `FuzzRange`: arbitrary bytes as the value of a
    /// `Range` header, planned for a `GET` of entries of lengths up to
    /// `Int.max`, alone and under a matching `If-Range`. Planning never
    /// traps; each plan is a 206 inside the entry, a 416 or the whole body
    /// (``checkRangePlan(_:length:)``); the bytes a server starts fetching
    /// before it knows the length are those the plan then sends. Returns
    /// whether the value parsed as a range set.
    @discardableResult
    public static func planRange(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let header = String(decoding: bytes, as: UTF8.self)
        try checkRange(header)
        let set = ByteRangeSet.parse(header)
        let known = set?.bytesKnownBeforeLength
        if let known { try fuzzCheck(!known.isEmpty && known.lowerBound >= 0, "speculated bytes \(known)") }
        for length in [0, 1, 7, 16384, 1 << 40, Int.max - 1, Int.max] {
            let representation = Representation(
                length: length, mimeType: "audio/mpeg", etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")
            for ifRange in [nil, "\"v1\""] {
                var headers = [(name: "Range", value: header)]
                if let ifRange { headers.append((name: "If-Range", value: ifRange)) }
                let request = HTTPRequest(method: "GET", target: "/", headers: headers)
                let plan = ResponsePlanner.plan(method: "GET", request: request, representation: representation)
                try checkRangePlan(plan, length: length)
                // What the server fetches with the content information is what it then sends.
                if let known, plan.head.status == 206, let body = plan.body {
                    try fuzzCheck(
                        body == known.lowerBound..<min(known.upperBound, length), "speculated \(known), sent \(body)")
                }
            }
        }
        return set != nil
    }

    /// A planned answer is a whole body, one range inside the entry with its
    /// `Content-Range`, or a 416 naming the length (or a conditional's status).
    static func checkRangePlan(_ plan: ResponsePlan, length: Int) throws(FuzzFailure) {
        let status = plan.head.status
        try fuzzCheck([200, 206, 304, 412, 416].contains(status), "status \(status)")
        switch status {
        case 206:
            guard let body = plan.body else { throw FuzzFailure("a 206 without a body") }
            try fuzzCheck(!body.isEmpty && body.lowerBound >= 0 && body.upperBound <= length, "206 outside the entry")
            try fuzzCheck(
                plan.head.value("Content-Range") == "bytes \(body.lowerBound)-\(body.upperBound - 1)/\(length)",
                "Content-Range differs from the body")
        case 416:
            try fuzzCheck(plan.body == nil, "a 416 with a body")
            try fuzzCheck(plan.head.value("Content-Range") == "bytes */\(length)", "a 416 without the length")
        case 200:
            try fuzzCheck(plan.body == nil || plan.body == 0..<length, "a 200 with part of the body")
        default:
            try fuzzCheck(plan.body == nil, "a body with \(status)")
        }
    }

    static func checkRange(_ header: String) throws(FuzzFailure) {
        guard let set = ByteRangeSet.parse(header) else { return }
        try fuzzCheck(!set.specs.isEmpty && set.specs.count <= ByteRangeSet.maxRanges, "range count")
        for length in [0, 1, 7, 1000, Int.max - 1, Int.max] {
            switch set.resolve(length: length) {
            case .single(let range):
                try fuzzCheck(
                    !range.isEmpty && range.lowerBound >= 0 && range.upperBound <= length, "range outside the length")
            case .several(let ranges):
                try fuzzCheck(ranges.count >= 2, "several ranges, fewer than two")
                let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
                for (a, b) in zip(sorted, sorted.dropFirst()) {
                    try fuzzCheck(a.upperBound < b.lowerBound, "overlap left")
                }
                for range in ranges { try fuzzCheck(!range.isEmpty && range.upperBound <= length, "a range outside") }
            case .unsatisfiable:
                try fuzzCheck(
                    set.specs.allSatisfy { ByteRangeSet.range(of: $0, length: length) == nil },
                    "unsatisfiable, yet a range fits")
            }
        }
    }
}
