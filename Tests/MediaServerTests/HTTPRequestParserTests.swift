import Testing

@testable import MediaServer

@Suite struct HTTPRequestParserTests {
    func parse(_ text: String, limits: HTTPLimits = HTTPLimits()) throws(HTTPParseError) -> (
        request: HTTPRequest, consumed: Int
    )? {
        try HTTPRequestParser.parse(Array(text.utf8), limits: limits)
    }

    func error(_ text: String, limits: HTTPLimits = HTTPLimits()) -> HTTPParseError? {
        do {
            _ = try parse(text, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test func requestLineAndHeaders() throws {
        let text = "GET /a/b?c=d HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nRange:   bytes=0-99 \t\r\nX-Empty:\r\n\r\n"
        let (request, consumed) = try #require(try parse(text))
        #expect(consumed == text.utf8.count)
        #expect(request.method == "GET" && request.target == "/a/b?c=d" && request.minorVersion == 1)
        #expect(request.header("range") == "bytes=0-99")
        #expect(request.header("X-EMPTY") == "")
        #expect(request.keepsAlive)
    }

    @Test func bareLineFeedsAndLeadingEmptyLines() throws {
        let text = "\r\n\nHEAD /x HTTP/1.0\nConnection: Keep-Alive\n\n"
        let (request, consumed) = try #require(try parse(text))
        #expect(consumed == text.utf8.count)
        #expect(request.method == "HEAD" && request.minorVersion == 0 && request.keepsAlive)
    }

    @Test func incompleteHeadWaits() throws {
        #expect(try parse("GET / HTTP/1.1\r\nHost: a\r\n") == nil)
        #expect(try parse("GET / HT") == nil)
        #expect(try parse("") == nil)
    }

    @Test func pipelinedRequestsComeOneAtATime() throws {
        let one = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
        let two = "GET /2 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
        var buffer = Array((one + two).utf8)
        let (first, used) = try #require(try HTTPRequestParser.parse(buffer))
        #expect(first.target == "/1" && used == one.utf8.count)
        buffer.removeFirst(used)
        let (second, _) = try #require(try HTTPRequestParser.parse(buffer))
        #expect(second.target == "/2" && !second.keepsAlive)
    }

    @Test func connectionOptions() throws {
        #expect(try #require(try parse("GET / HTTP/1.0\r\n\r\n")).request.keepsAlive == false)
        #expect(
            try #require(try parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: TE, close\r\n\r\n")).request.keepsAlive
                == false)
    }

    @Test func malformedHeadsAre400() {
        for text in [
            "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",  // bare CR
            "GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // obsolete folding
            "GET / HTTP/1.1\r\nHost : a\r\n\r\n",  // space before the colon
            "GET / HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nX: \u{01}\r\n\r\n",  // control character
            "GET /  HTTP/1.1\r\nHost: a\r\n\r\n",  // two spaces
            "GET / HTTP/1.1 extra\r\nHost: a\r\n\r\n",
            "G(T / HTTP/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\r\n\r\n",  // no Host
            "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            "GET / http/1.1\r\nHost: a\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n",
        ] {
            #expect(error(text)?.status == 400, "\(text.debugDescription)")
        }
    }

    @Test func limitsHaveTheirStatuses() {
        let limits = HTTPLimits(maxRequestLineBytes: 64, maxHeadBytes: 256, maxHeaderCount: 4)
        let longTarget = "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: a\r\n\r\n"
        #expect(error(longTarget, limits: limits) == .requestLineTooLong)
        // Detected before the line ends: no waiting for the rest.
        #expect(error("GET /" + String(repeating: "a", count: 100), limits: limits) == .requestLineTooLong)
        let many = "GET / HTTP/1.1\r\nHost: a\r\n" + (0..<5).map { "X\($0): y\r\n" }.joined() + "\r\n"
        #expect(error(many, limits: limits) == .tooManyHeaders)
        let big = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "b", count: 300)
        #expect(error(big, limits: limits) == .headTooLarge)
        #expect(error(big, limits: limits)?.status == 431)
        #expect(error("GET / HTTP/2.0\r\nHost: a\r\n\r\n")?.status == 505)
        #expect(error("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc")?.status == 413)
        #expect(error("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")?.status == 501)
        #expect(error("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") == nil)
    }

    /// The request line is read in place: its shapes and their statuses.
    @Test func requestLineShapes() throws {
        let request = try #require(try parse("PATCH /a%20b?c HTTP/1.0\r\n\r\n")).request
        #expect(request.method == "PATCH" && request.target == "/a%20b?c" && request.minorVersion == 0)
        for line in [
            " GET / HTTP/1.1", "GET / HTTP/1.1 ", "GET /", "GET", "GET / ", "GET / HTTP/1.10", "GET / HTTP/1x1",
            "GET / http/1.1", "GET / HTTP/a.1", "GET /\u{7F} HTTP/1.1", "GET / HTTP/1.", "G@T / HTTP/1.1",
        ] {
            #expect(error(line + "\r\nHost: a\r\n\r\n")?.status == 400, "\(line.debugDescription)")
        }
        #expect(error("GET / HTTP/0.9\r\nHost: a\r\n\r\n")?.status == 505)
    }

    /// `tchar` (RFC 9110 §5.6.2), byte by byte.
    @Test func tokenBytes() {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(HTTPRequestParser.isTokenByte(byte) == tchar.contains(byte), "\(byte)")
        }
    }

    /// Field names compare without the case of ASCII letters, and only so.
    @Test func fieldNamesCompareWithoutASCIICase() {
        let request = HTTPRequest(
            method: "GET", target: "/", headers: [("rAnGe", "bytes=0-1"), ("X-\u{C9}", "e"), ("Host", "a")])
        #expect(request.header("Range") == "bytes=0-1" && request.header("RANGE") == "bytes=0-1")
        #expect(request.header("Rang") == nil && request.header("Rangf") == nil && request.header("Ranges") == nil)
        #expect(request.header("X-\u{C9}") == "e" && request.header("x-\u{C9}") == "e")
        #expect(request.header("X-\u{E9}") == nil)
        #expect(request.headers(named: "host") == ["a"])
    }
}
