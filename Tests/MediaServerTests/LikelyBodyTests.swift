import Testing

@testable import MediaServer

/// Which requests start their body together with the content information.
@Suite struct LikelyBodyTests {
    func guess(_ headers: [(String, String)], method: String = "GET") -> Range<Int>? {
        Responder.likelyBody(
            HTTPRequest(method: method, target: "/", headers: headers.map { (name: $0.0, value: $0.1) }))
    }

    @Test func knownBeforeTheLength() {
        #expect(guess([]) == 0..<Int.max)
        #expect(guess([("Range", "bytes=10-19")]) == 10..<20)
        #expect(guess([("Range", "bytes=10-")]) == 10..<Int.max)
        #expect(guess([("Range", "bytes=0-99999999999999999999")]) == 0..<Int.max)
        #expect(guess([("Range", "junk")]) == 0..<Int.max, "an invalid Range is ignored: the whole body")
        #expect(guess([("Range", "bytes=0-1"), ("If-Range", "\"x\"")]) == 0..<2)
    }

    @Test func needTheLengthFirst() {
        #expect(guess([], method: "HEAD") == nil)
        #expect(guess([("Range", "bytes=-100")]) == nil)
        #expect(guess([("Range", "bytes=0-1,5-6")]) == nil)
        #expect(guess([("If-None-Match", "\"x\"")]) == nil)
        #expect(guess([("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT")]) == nil)
    }

    /// A first byte no entry can have (a saturated number): no bytes to
    /// start with, only the length tells it is a 416.
    @Test func pastEveryEnd() {
        #expect(guess([("Range", "bytes=99999999999999999999-")]) == nil)
        #expect(guess([("Range", "bytes=9223372036854775807-")]) == nil)
        #expect(guess([("Range", "bytes=9223372036854775807-9223372036854775807")]) == nil)
        #expect(guess([("Range", "bytes=9223372036854775806-9223372036854775807")]) == (Int.max - 1)..<Int.max)
    }
}
