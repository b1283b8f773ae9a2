import Foundation
import MediaStreaming
import TestSupport
import Testing

/// An origin that answers with `Content-Encoding: gzip` though `identity`
/// was asked for: URLSession decodes the body, so its `Content-Length`
/// and `Content-Range` (which count encoded bytes) must not place decoded
/// bytes in the store. The loader refuses it with a typed error; the
/// store never holds a wrong byte.
@Suite("Hostile origin: Content-Encoding")
struct ContentEncodingTests {
    static let content = Data((0..<(200 << 10)).map { UInt8(truncatingIfNeeded: ($0 / 7) % 61) })

    /// `data` compressed by the `gzip` command.
    static func gzip(_ data: Data) throws -> Data {
        let directory = temporaryPath("gzip-fixture")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("body")
        try data.write(to: file)
        let (status, _) = try runTool(["gzip", "-n", file.path])
        guard status == 0 else { throw FixtureFailure(message: "gzip exited \(status)") }
        return try Data(contentsOf: directory.appendingPathComponent("body.gz"))
    }

    /// How the origin encodes.
    enum Answer: CaseIterable {
        /// Ignores `Range`: `200` with the whole resource gzipped.
        case wholeGzip
        /// `206` with the range asked for of the gzipped resource (ranges of the encoded bytes).
        case rangeOfGzip
    }

    static func origin(_ answer: Answer, gzipped: Data) throws -> ScriptedOrigin {
        try ScriptedOrigin { request, reply in
            let headers = ["Content-Type": "audio/mpeg", "ETag": "\"gz\"", "Content-Encoding": "gzip"]
            switch answer {
            case .wholeGzip:
                reply.respond(status: 200, headers: headers, body: gzipped)
            case .rangeOfGzip:
                reply.serve(gzipped, for: request, headers: headers, etag: "\"gz\"")
            }
        }
    }

    @Test func urlSessionDecodesTheBodyWhichComesWithoutItsEncodedLength() async throws {
        let gzipped = try Self.gzip(Self.content)
        let origin = try Self.origin(.wholeGzip, gzipped: gzipped)
        defer { origin.stop() }
        let response = try await HTTPOrigin(timeout: .seconds(10)).fetch(OriginRequest(url: origin.url("/a.mp3")))
        var body = Data()
        for try await piece in response.body { body.append(piece) }
        #expect(origin.requests.first?.header("Accept-Encoding") == "identity")
        #expect(response.contentEncoding == "gzip")
        #expect(body == Self.content)
        #expect(response.contentLength == nil)
    }

    @Test func anEncodedRangeIsRefused() async throws {
        let gzipped = try Self.gzip(Self.content)
        let origin = try Self.origin(.rangeOfGzip, gzipped: gzipped)
        defer { origin.stop() }
        await #expect(throws: OriginError.contentEncoded("gzip")) {
            _ = try await HTTPOrigin(timeout: .seconds(10)).fetch(
                OriginRequest(url: origin.url("/a.mp3"), range: 0..<1000))
        }
    }

    @Test(arguments: Answer.allCases)
    func theStoreNeverHoldsWrongBytes(_ answer: Answer) async throws {
        let gzipped = try Self.gzip(Self.content)
        let origin = try Self.origin(answer, gzipped: gzipped)
        defer { origin.stop() }
        let cache = try TestCache()
        let url = origin.url("/gz.mp3")
        let player = cache.player(url)
        let opening = await player.load(contentInformation: true, offset: 0, length: nil)
        let seek = await player.load(offset: 50_000, length: 10_000)
        for outcome in [opening, seek] {
            if let error = outcome.error {
                #expect(error == .origin(.contentEncoded("gzip")))
            } else {
                Issue.record("a read of a gzip body succeeded with \(outcome.data.count) bytes")
            }
        }
        #expect(opening.data == Self.content.prefix(opening.data.count))
        #expect(seek.data == Self.content.dropFirst(50_000).prefix(seek.data.count))
        #expect(try cache.store.verify().isClean)
        #expect(try cache.cachedBytesMatch(url, Self.content))
        #expect(try cache.store.cachedRanges(forKey: cache.cache.cacheKey(for: url)).byteCount == 0)
    }
}
