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
}
