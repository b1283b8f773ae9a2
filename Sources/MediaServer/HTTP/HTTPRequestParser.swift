/// Parses HTTP/1.x request heads (RFC 9112 §2–§5) from the bytes a
/// connection has received, within ``HTTPLimits``.
///
/// Lines end in CRLF or a bare LF (RFC 9112 §2.2 allows a recipient to
/// accept LF alone); a bare CR anywhere else, obsolete line folding,
/// whitespace before a field's colon, control characters in a value and
/// a missing or repeated `Host` are refused, so nothing a client sends
/// can smuggle a second request or a header into the first. Empty lines
/// before the request line are skipped. Pure: no I/O.
///
/// ```swift
/// if let (request, consumed) = try HTTPRequestParser.parse(buffer) { … buffer.removeFirst(consumed) }
/// ```
public enum HTTPRequestParser {
    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")

    /// The first request head in `bytes` and how many bytes it took;
    /// `nil` when the head is not complete yet (and within the limits).
    ///
    /// - throws: ``HTTPParseError`` when the head is malformed or too large;
    ///   a too-large head is detected before it is complete.
    public static func parse(_ bytes: [UInt8], limits: HTTPLimits = HTTPLimits()) throws(HTTPParseError) -> (
        request: HTTPRequest, consumed: Int
    )? {
        var start = 0
        // RFC 9112 §2.2: ignore empty lines before the request line (a bounded number of them).
        while start < bytes.count, start < limits.maxRequestLineBytes {
            if bytes[start] == lf {
                start += 1
            } else if bytes[start] == cr, start + 1 < bytes.count, bytes[start + 1] == lf {
                start += 2
            } else {
                break
            }
        }
        var lines: [Range<Int>] = []
        var position = start
        while true {
            guard let newline = firstIndex(of: lf, in: bytes, from: position) else {
                let pending = bytes.count - position
                if lines.isEmpty, pending > limits.maxRequestLineBytes { throw .requestLineTooLong }
                if bytes.count - start > limits.maxHeadBytes { throw .headTooLarge }
                return nil
            }
            let end = newline > position && bytes[newline - 1] == cr ? newline - 1 : newline
            if lines.isEmpty, end - position > limits.maxRequestLineBytes { throw .requestLineTooLong }
            if newline + 1 - start > limits.maxHeadBytes { throw .headTooLarge }
            if end == position {
                if lines.isEmpty { throw .malformed(reason: "empty request line") }
                position = newline + 1
                break
            }
            lines.append(position..<end)
            if lines.count - 1 > limits.maxHeaderCount { throw .tooManyHeaders }
            position = newline + 1
        }
        for line in lines where bytes[line].contains(cr) { throw .malformed(reason: "bare CR") }
        var request = try requestLine(bytes[lines[0]])
        for line in lines.dropFirst() {
            request.headers.append(try field(bytes[line]))
        }
        try check(request)
        return (request, position)
    }

    private static func firstIndex(of byte: UInt8, in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < bytes.count {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    /// `method SP request-target SP HTTP-version` (RFC 9112 §3).
    /// Read in place (no copies of the parts): it runs on every request.
    private static func requestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        // Exactly two spaces, around a non-empty method and target.
        guard let first = line.firstIndex(of: space), let second = line[(first + 1)...].firstIndex(of: space),
            !line[(second + 1)...].contains(space), first > line.startIndex, second > first + 1
        else { throw .malformed(reason: "request line is not `method target version`") }
        let method = line[..<first]
        let target = line[(first + 1)..<second]
        let version = line[(second + 1)...]
        guard method.allSatisfy(isTokenByte) else { throw .malformed(reason: "bad method") }
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw .malformed(reason: "bad request target") }
        let v = version.startIndex
        guard version.count == 8, version.prefix(5).elementsEqual("HTTP/".utf8), version[v + 6] == UInt8(ascii: "."),
            isDigit(version[v + 5]), isDigit(version[v + 7])
        else { throw .malformed(reason: "bad HTTP version") }
        guard version[v + 5] == UInt8(ascii: "1") else { throw .unsupportedVersion }
        return HTTPRequest(
            method: String(decoding: method, as: UTF8.self), target: String(decoding: target, as: UTF8.self),
            minorVersion: Int(version[v + 7] - UInt8(ascii: "0")))
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5).
    private static func field(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (name: String, value: String) {
        guard let first = line.first, first != space, first != tab else {
            throw .malformed(reason: "obsolete line folding")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            throw .malformed(reason: "header without a colon")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .malformed(reason: "bad header name") }
        var value = line[(colon + 1)...]
        while let byte = value.first, byte == space || byte == tab { value = value.dropFirst() }
        while let byte = value.last, byte == space || byte == tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == tab || $0 >= 0x20 && $0 != 0x7F }) else {
            throw .malformed(reason: "control character in a header value")
        }
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    /// What the head as a whole must satisfy: one `Host` (RFC 9112 §3.2),
    /// no body (the server takes none).
    private static func check(_ request: HTTPRequest) throws(HTTPParseError) {
        let hosts = request.headers(named: "Host")
        if hosts.count > 1 || (request.minorVersion >= 1 && hosts.isEmpty) {
            throw .malformed(reason: "a request needs exactly one Host header")
        }
        if !request.headers(named: "Transfer-Encoding").isEmpty { throw .transferEncodingNotImplemented }
        for value in request.headers(named: "Content-Length") {
            for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                let digits = item.trimmingOWS()
                guard !digits.isEmpty, digits.utf8.allSatisfy(isDigit) else {
                    throw .malformed(reason: "bad Content-Length")
                }
                if digits.utf8.contains(where: { $0 != UInt8(ascii: "0") }) { throw .bodyNotAccepted }
            }
        }
    }

    /// `tchar` of RFC 9110 §5.6.2.
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    package static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
