import Foundation
import Testing

@testable import MediaStreaming

/// The response validator on its own: every branch, no network (each
/// test takes microseconds).
@Suite("Response validator")
struct ResponseValidatorTests {
    static let url = URL(string: "https://origin.example/track.mp3")!
    static let length = 100_000
    static let chunkSize = 16_384
    static let known = ResourceValidators(etag: "\"a\"", lastModified: "Mon, 30 Nov 2026 10:00:00 GMT")

    private static func response(_ status: Int, _ headers: [String: String] = [:]) -> OriginResponse {
        OriginResponse(statusCode: status, headers: headers, body: AsyncThrowingStream { $0.finish() })
    }

    /// `checkRange` for `requested` of the known resource.
    private func checkRange(
        _ response: OriginResponse, requested: Range<Int> = 16_384..<49_152, validators: ResourceValidators = known
    ) throws(StreamingError) -> ExpectedBody {
        try ResponseValidator.checkRange(
            response, requested: requested, length: Self.length, validators: validators, chunkSize: Self.chunkSize,
            url: Self.url)
    }

    private func error(_ body: () throws(StreamingError) -> some Any) -> StreamingError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    private func isMismatch(_ error: StreamingError?) -> Bool {
        if case .origin(.contentRangeMismatch) = error { return true }
        return false
    }

    // MARK: Exact ranges (HLS byte ranges, resource length unknown)

    @Test("An exact range: 206 must name exactly it; 200 is the whole resource from 0; else the status")
    func exactRange() throws {
        let requested = 1000..<2000
        func check(_ response: OriginResponse) throws(StreamingError) -> ExpectedBody {
            try ResponseValidator.checkExactRange(response, requested: requested, url: Self.url)
        }
        let partial = try check(Self.response(206, ["Content-Range": "bytes 1000-1999/5000"]))
        #expect(partial == ExpectedBody(start: 1000, end: 2000, isWholeResource: false))
        let whole = try check(Self.response(200, ["Content-Length": "5000"]))
        #expect(whole == ExpectedBody(start: 0, end: 5000, isWholeResource: true))
        // Starting right but ending early is not the range asked for (no chunk boundaries here).
        let short = error { () throws(StreamingError) in
            try check(Self.response(206, ["Content-Range": "bytes 1000-1499/5000"]))
        }
        #expect(short == .origin(.contentRangeMismatch(requested: "bytes=1000-1999", received: "bytes 1000-1499/5000")))
        let missing = error { () throws(StreamingError) in try check(Self.response(206)) }
        #expect(missing == .origin(.contentRangeMismatch(requested: "bytes=1000-1999", received: "none")))
        let refused = error { () throws(StreamingError) in try check(Self.response(403)) }
        #expect(refused == .origin(.httpStatus(code: 403, url: Self.url)))
    }

    // MARK: Range requests of a known resource

    @Test("206 with the Content-Range asked for: the body is that range")
    func partialAsAsked() throws {
        let body = try checkRange(Self.response(206, ["Content-Range": "bytes 16384-49151/100000", "ETag": "\"a\""]))
        #expect(body == ExpectedBody(start: 16_384, end: 49_152, isWholeResource: false))
    }

    @Test("206 ending early on a chunk boundary is accepted; off a boundary it is a mismatch")
    func partialEndingEarly() throws {
        let onBoundary = try checkRange(Self.response(206, ["Content-Range": "bytes 16384-32767/100000"]))
        #expect(onBoundary.end == 32_768)
        let offBoundary = error { () throws(StreamingError) in
            try checkRange(Self.response(206, ["Content-Range": "bytes 16384-30000/100000"]))
        }
        #expect(isMismatch(offBoundary))
    }

    @Test("206 for the last range ends at the resource's end")
    func partialAtTheEnd() throws {
        let body = try checkRange(
            Self.response(206, ["Content-Range": "bytes 98304-99999/100000"]), requested: 98_304..<114_688)
        #expect(body == ExpectedBody(start: 98_304, end: 100_000, isWholeResource: false))
    }

    @Test(
        "206 with a Content-Range that is not the one asked for is a mismatch",
        arguments: [
            "bytes 17384-50175/100000",  // wrong start
            "bytes 0-32767/100000",  // earlier start
            "bytes 16384-65535/100000",  // past the end asked for
            "bytes 16384-49151",  // malformed
            "bytes */100000",  // no range
        ])
    func partialWrongRange(header: String) {
        let failure = error { () throws(StreamingError) in try checkRange(Self.response(206, ["Content-Range": header]))
        }
        #expect(isMismatch(failure))
    }

    @Test("206 without Content-Range is a mismatch naming the missing header")
    func partialWithoutContentRange() {
        let failure = error { () throws(StreamingError) in try checkRange(Self.response(206)) }
        #expect(failure == .origin(.contentRangeMismatch(requested: "bytes=16384-49151", received: "none")))
    }

    @Test("206 with another total length means the resource changed")
    func partialOtherLength() {
        let failure = error { () throws(StreamingError) in
            try checkRange(Self.response(206, ["Content-Range": "bytes 16384-49151/100001"]))
        }
        #expect(failure == .resourceChanged(url: Self.url))
    }

    @Test("206 with another ETag means the resource changed; a changed date beside the same ETag does not")
    func partialValidators() throws {
        let changed = error { () throws(StreamingError) in
            try checkRange(Self.response(206, ["Content-Range": "bytes 16384-49151/100000", "ETag": "\"b\""]))
        }
        #expect(changed == .resourceChanged(url: Self.url))
        let sameTag = try checkRange(
            Self.response(
                206,
                [
                    "Content-Range": "bytes 16384-49151/100000", "ETag": "\"a\"",
                    "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT",
                ]))
        #expect(sameTag.start == 16_384)
    }

    @Test("Without ETags, Last-Modified decides; validators missing on one side prove nothing")
    func partialDates() throws {
        let datesOnly = ResourceValidators(lastModified: "Mon, 30 Nov 2026 10:00:00 GMT")
        let changed = error { () throws(StreamingError) in
            try checkRange(
                Self.response(
                    206,
                    ["Content-Range": "bytes 16384-49151/100000", "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"]),
                validators: datesOnly)
        }
        #expect(changed == .resourceChanged(url: Self.url))
        let bare = try checkRange(Self.response(206, ["Content-Range": "bytes 16384-49151/100000"]))
        #expect(bare.end == 49_152)
        let unknownBefore = try checkRange(
            Self.response(206, ["Content-Range": "bytes 16384-49151/100000", "ETag": "\"z\""]),
            validators: ResourceValidators())
        #expect(unknownBefore.end == 49_152)
    }

    @Test("200 is the whole resource when its length and validators agree")
    func whole() throws {
        let body = try checkRange(Self.response(200, ["Content-Length": "100000", "ETag": "\"a\""]))
        #expect(body == ExpectedBody(start: 0, end: 100_000, isWholeResource: true))
        let unannounced = try checkRange(Self.response(200))
        #expect(unannounced == ExpectedBody(start: 0, end: 100_000, isWholeResource: true))
    }

    @Test("200 with another length or ETag means the resource changed")
    func wholeChanged() {
        let longer = error { () throws(StreamingError) in
            try checkRange(Self.response(200, ["Content-Length": "100001"]))
        }
        #expect(longer == .resourceChanged(url: Self.url))
        let retagged = error { () throws(StreamingError) in
            try checkRange(Self.response(200, ["Content-Length": "100000", "ETag": "\"b\""]))
        }
        #expect(retagged == .resourceChanged(url: Self.url))
    }

    @Test("304, 4xx and 5xx to a range request are status errors", arguments: [304, 403, 404, 410, 500, 503])
    func statuses(code: Int) {
        let failure = error { () throws(StreamingError) in try checkRange(Self.response(code, ["ETag": "\"b\""])) }
        #expect(failure == .origin(.httpStatus(code: code, url: Self.url)))
    }

    @Test("416 naming another total means the resource changed; otherwise it is a status error")
    func unsatisfiable() {
        let shrunk = error { () throws(StreamingError) in
            try checkRange(Self.response(416, ["Content-Range": "bytes */9000"]))
        }
        #expect(shrunk == .resourceChanged(url: Self.url))
        let same = error { () throws(StreamingError) in
            try checkRange(Self.response(416, ["Content-Range": "bytes */100000"]))
        }
        #expect(same == .origin(.httpStatus(code: 416, url: Self.url)))
    }

    @Test("A range answered with a Content-Encoding is refused, identity is not")
    func encodedRange() {
        let encoded = error { () throws(StreamingError) -> ExpectedBody in
            try checkRange(
                Self.response(
                    206, ["Content-Range": "bytes 16384-49151/100000", "ETag": "\"a\"", "Content-Encoding": "gzip"]))
        }
        #expect(encoded == .origin(.contentEncoded("gzip")))
        let whole = error { () throws(StreamingError) -> ExpectedBody in
            try checkRange(Self.response(200, ["Content-Length": "100000", "Content-Encoding": "br"]))
        }
        #expect(whole == .origin(.contentEncoded("br")))
        let identity = error { () throws(StreamingError) -> ExpectedBody in
            try checkRange(
                Self.response(
                    206,
                    ["Content-Range": "bytes 16384-49151/100000", "ETag": "\"a\"", "Content-Encoding": "identity"]))
        }
        #expect(identity == nil)
    }

    @Test("A first response with a Content-Encoding is refused")
    func encodedFirst() {
        let failure = error { () throws(StreamingError) -> FirstResponse in
            try checkFirst(Self.response(200, ["Content-Encoding": "GZip"]))
        }
        #expect(failure == .origin(.contentEncoded("gzip")))
    }

    // MARK: The first response

    private func checkFirst(_ response: OriginResponse, conditional: Bool = false) throws(StreamingError)
        -> FirstResponse
    {
        try ResponseValidator.checkFirst(response, requested: 0..<65_536, conditional: conditional, url: Self.url)
    }

    @Test("A first 206 gives the total length, the body's range and the validators")
    func firstPartial() throws {
        let first = try checkFirst(
            Self.response(
                206,
                [
                    "Content-Range": "bytes 0-65535/100000", "ETag": "\"a\"",
                    "Last-Modified": "Mon, 30 Nov 2026 10:00:00 GMT",
                ]))
        #expect(
            first
                == .content(
                    total: 100_000, body: ExpectedBody(start: 0, end: 65_536, isWholeResource: false),
                    validators: Self.known))
    }

    @Test(
        "A first 206 without a total, not from byte 0, or without Content-Range is a mismatch",
        arguments: ["bytes 0-65535/*", "bytes 1-65535/100000", nil])
    func firstPartialUnusable(header: String?) {
        let failure = error { () throws(StreamingError) in
            try checkFirst(Self.response(206, header.map { ["Content-Range": $0] } ?? [:]))
        }
        #expect(isMismatch(failure))
    }

    @Test("A first 200 is the whole resource, of the announced length or of unknown length")
    func firstWhole() throws {
        #expect(
            try checkFirst(Self.response(200, ["Content-Length": "5000"]))
                == .content(
                    total: 5000, body: ExpectedBody(start: 0, end: 5000, isWholeResource: true),
                    validators: ResourceValidators()))
        #expect(
            try checkFirst(Self.response(200))
                == .content(
                    total: nil, body: ExpectedBody(start: 0, end: nil, isWholeResource: true),
                    validators: ResourceValidators()))
    }

    @Test("304 answers a conditional first request only")
    func firstNotModified() throws {
        #expect(try checkFirst(Self.response(304), conditional: true) == .notModified)
        let unasked = error { () throws(StreamingError) in try checkFirst(Self.response(304)) }
        #expect(unasked == .origin(.httpStatus(code: 304, url: Self.url)))
    }

    @Test("A first 4xx or 5xx is a status error", arguments: [401, 404, 500, 502])
    func firstStatuses(code: Int) {
        let failure = error { () throws(StreamingError) in try checkFirst(Self.response(code), conditional: true) }
        #expect(failure == .origin(.httpStatus(code: code, url: Self.url)))
    }

    // MARK: Stored entries, If-Range

    private func action(
        storedLength: Int? = 100_000, stored: ResourceValidators = known, expired: Bool = false,
        total: Int? = 100_000, announced: ResourceValidators = known
    ) -> StoredEntryAction {
        ResponseValidator.storedEntryAction(
            storedLength: storedLength, storedValidators: stored, storedIsExpired: expired, total: total,
            validators: announced)
    }

    @Test("A stored entry of the same length and validators is kept, or renewed when expired")
    func storedSameVersion() {
        #expect(action() == .keep)
        #expect(action(expired: true) == .renew)
        #expect(action(storedLength: nil) == .keep)
        #expect(action(total: nil) == .keep)
        #expect(action(stored: ResourceValidators(), announced: ResourceValidators()) == .keep)
    }

    @Test("A stored entry of another length or validator, or one that cannot be confirmed, is replaced")
    func storedOtherVersion() {
        #expect(action(total: 100_001) == .replace)
        #expect(action(announced: ResourceValidators(etag: "\"b\"", lastModified: Self.known.lastModified)) == .replace)
        #expect(action(announced: ResourceValidators()) == .replace)
        #expect(
            action(stored: ResourceValidators(lastModified: "x"), announced: ResourceValidators(lastModified: "y"))
                == .replace)
        #expect(action(stored: ResourceValidators(), announced: Self.known) == .replace)
    }

    @Test("If-Range carries a strong ETag only")
    func ifRange() {
        #expect(ResponseValidator.ifRange(for: Self.known) == "\"a\"")
        #expect(ResponseValidator.ifRange(for: ResourceValidators(etag: "W/\"a\"")) == nil)
        #expect(
            ResponseValidator.ifRange(for: ResourceValidators(lastModified: "Mon, 30 Nov 2026 10:00:00 GMT")) == nil)
        #expect(ResponseValidator.ifRange(for: ResourceValidators()) == nil)
    }

    @Test("A request sends If-Range with its Range only, over a caller's own header")
    func ifRangeHeader() {
        var request = OriginRequest(
            url: Self.url, range: 0..<10, headers: ["if-range": "\"caller\"", "Authorization": "x"], ifRange: "\"a\"")
        #expect(request.allHeaders["If-Range"] == "\"a\"")
        #expect(request.allHeaders["if-range"] == nil)
        #expect(request.allHeaders["Authorization"] == "x")
        request.range = nil
        #expect(request.allHeaders["If-Range"] == nil)
    }
}
