import MediaStreaming
import Testing

@testable import MediaServer

@Suite struct ResponsePlannerTests {
    let representation = Representation(
        length: 1000, mimeType: "audio/mpeg", etag: "\"v1\"", lastModified: "Sun, 06 Nov 1994 08:49:37 GMT")

    func plan(_ headers: [(String, String)], method: String = "GET") -> ResponsePlan {
        let request = HTTPRequest(
            method: method, target: "/", headers: [("Host", "a")] + headers.map { (name: $0.0, value: $0.1) })
        return ResponsePlanner.plan(method: method, request: request, representation: representation)
    }

    @Test func wholeBody() {
        let answer = plan([])
        #expect(answer.head.status == 200 && answer.body == 0..<1000)
        #expect(answer.head.value("Content-Length") == "1000")
        #expect(answer.head.value("Accept-Ranges") == "bytes")
        #expect(answer.head.value("Content-Type") == "audio/mpeg")
        #expect(answer.head.value("ETag") == "\"v1\"")
        #expect(answer.head.value("Last-Modified") == representation.lastModified)
    }

    @Test func headHasTheHeadersAndNoBody() {
        let answer = plan([("Range", "bytes=0-1")], method: "HEAD")
        #expect(answer.head.status == 200 && answer.body == nil && answer.head.value("Content-Length") == "1000")
    }

    @Test func partial() {
        let answer = plan([("Range", "bytes=-100")])
        #expect(answer.head.status == 206 && answer.body == 900..<1000)
        #expect(answer.head.value("Content-Range") == "bytes 900-999/1000")
        #expect(answer.head.value("Content-Length") == "100")
    }

    @Test func unsatisfiableIs416WithTheLength() {
        let answer = plan([("Range", "bytes=1000-")])
        #expect(answer.head.status == 416 && answer.body == nil)
        #expect(answer.head.value("Content-Range") == "bytes */1000")
        #expect(ContentRange(header: answer.head.value("Content-Range")!) == ContentRange(range: nil, total: 1000))
    }

    @Test func severalRangesGetTheWholeBody() {
        let answer = plan([("Range", "bytes=0-1,10-11")])
        #expect(answer.head.status == 200 && answer.body == 0..<1000 && answer.head.value("Content-Range") == nil)
    }

    @Test func invalidRangeIsIgnored() {
        #expect(plan([("Range", "bytes=9-1")]).head.status == 200)
    }

    @Test func ifRange() {
        #expect(plan([("Range", "bytes=0-9"), ("If-Range", "\"v1\"")]).head.status == 206)
        #expect(plan([("Range", "bytes=0-9"), ("If-Range", "\"v0\"")]).head.status == 200)
        #expect(plan([("Range", "bytes=0-9"), ("If-Range", "W/\"v1\"")]).head.status == 200, "weak tags never match")
        #expect(plan([("Range", "bytes=0-9"), ("If-Range", representation.lastModified!)]).head.status == 206)
        #expect(plan([("Range", "bytes=0-9"), ("If-Range", "Mon, 07 Nov 1994 08:49:37 GMT")]).head.status == 200)
    }

    @Test func conditionals() {
        let notModified = plan([("If-None-Match", "\"x\", W/\"v1\"")])
        #expect(notModified.head.status == 304 && notModified.body == nil && notModified.head.value("ETag") == "\"v1\"")
        #expect(plan([("If-None-Match", "*")]).head.status == 304)
        #expect(plan([("If-None-Match", "\"v2\"")]).head.status == 200)
        #expect(plan([("If-Modified-Since", representation.lastModified!)]).head.status == 304)
        #expect(
            plan([("If-None-Match", "\"v2\""), ("If-Modified-Since", representation.lastModified!)]).head.status == 200)
        #expect(plan([("If-Match", "\"v2\"")]).head.status == 412)
        #expect(plan([("If-Match", "\"v1\"")]).head.status == 200)
    }

    @Test func headValuesCannotInjectFields() {
        var head = ResponseHead(status: 200)
        head.add("Content-Type", "audio/mpeg\r\nSet-Cookie: x=1")
        head.add("Bad Name", "x")
        let text = String(decoding: head.serialized(), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg  Set-Cookie: x=1\r\n\r\n")
    }

    @Test func chunkedFraming() {
        #expect(ChunkedEncoder.chunk(Array("hello, world!!!!".utf8)) == Array("10\r\nhello, world!!!!\r\n".utf8))
        #expect(ChunkedEncoder.chunk([UInt8]()).isEmpty)
        #expect(ChunkedEncoder.end == Array("0\r\n\r\n".utf8))
    }
}
