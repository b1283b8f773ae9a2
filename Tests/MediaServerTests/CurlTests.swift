import Foundation
import MediaServer
import Testing

/// The server against the real `curl`: HEAD, ranges, conditionals,
/// keep-alive, the secret and the allowlist, origin errors.
@Suite("MediaServer with curl", .serialized, .timeLimit(.minutes(3)))
struct CurlTests {
    @Test func pingNeedsNoSecret() async throws {
        let fixture = try ServerFixture()
        let result = try await Curl.run([fixture.server.baseURL!.absoluteString + "/ping"])
        #expect(result.status == 200 && String(decoding: result.body, as: UTF8.self) == "ok\n")
    }

    @Test func headAndWholeBody() async throws {
        let fixture = try ServerFixture()
        let original = try ServerFixture.fixture("track.mp3")
        let head = try await Curl.run(["-I", fixture.local("track.mp3").absoluteString])
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == String(original.count))
        #expect(head.headers["content-type"] == "audio/mpeg")
        #expect(head.headers["accept-ranges"] == "bytes")
        #expect(head.headers["etag"]?.hasPrefix("\"") == true)
        #expect(head.headers["last-modified"] != nil)
        // No body after a HEAD: a pipelined second request's answer follows the head at once.
        let client = try RawClient(port: fixture.port)
        let path = fixture.local("track.mp3").path
        let host = "Host: 127.0.0.1:\(fixture.port)"
        client.send(
            "HEAD \(path) HTTP/1.1\r\n\(host)\r\n\r\nGET /ping HTTP/1.1\r\n\(host)\r\nConnection: close\r\n\r\n")
        let answers = await client.readToEnd().components(separatedBy: "\r\n\r\n")
        #expect(answers.count == 3 && answers[1].hasPrefix("HTTP/1.1 200 OK") && answers[2] == "ok\n", "\(answers)")
        let whole = try await Curl.run([fixture.local("track.mp3").absoluteString])
        #expect(whole.status == 200 && whole.body == original)
    }

    @Test func ranges() async throws {
        let fixture = try ServerFixture()
        let original = try ServerFixture.fixture("track.flac")
        let url = fixture.local("track.flac").absoluteString
        let closed = try await Curl.run(["-r", "100-199", url])
        #expect(closed.status == 206 && closed.body == original[100..<200])
        #expect(closed.headers["content-range"] == "bytes 100-199/\(original.count)")
        let suffix = try await Curl.run(["-r", "-500", url])
        #expect(suffix.status == 206 && suffix.body == original.suffix(500))
        let open = try await Curl.run(["-r", "50000-", url])
        #expect(open.status == 206 && open.body == original[50000...])
        let beyond = try await Curl.run(["-r", "\(original.count)-", url])
        #expect(beyond.status == 416 && beyond.headers["content-range"] == "bytes */\(original.count)")
        let several = try await Curl.run(["-r", "0-9,100-109", url])
        #expect(several.status == 200 && several.body == original, "several ranges: the whole body")
    }

    @Test func ifRangeAndIfNoneMatch() async throws {
        let fixture = try ServerFixture()
        let original = try ServerFixture.fixture("track.m4a")
        let url = fixture.local("track.m4a").absoluteString
        let etag = try #require(try await Curl.run(["-I", url]).headers["etag"])
        let matching = try await Curl.run(["-r", "0-99", "-H", "If-Range: \(etag)", url])
        #expect(matching.status == 206 && matching.body == original[0..<100])
        let stale = try await Curl.run(["-r", "0-99", "-H", "If-Range: \"stale\"", url])
        #expect(stale.status == 200 && stale.body == original)
        let notModified = try await Curl.run(["-H", "If-None-Match: \(etag)", url])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
    }

    @Test func keepAliveReusesOneConnection() async throws {
        let fixture = try ServerFixture()
        let url = fixture.local("track.mp3").absoluteString
        let result = try await Curl.run(["-r", "0-9", url, "-r", "10-19", url, "-r", "20-29", url])
        #expect(result.exitStatus == 0)
        #expect(result.log.components(separatedBy: "Re-using existing connection").count - 1 == 2, "\(result.log)")
        #expect(fixture.server.statistics.connectionsAccepted == 1)
        #expect(fixture.server.statistics.requests == 3)
    }

    @Test func withoutTheSecretOrForAnotherOriginIs403() async throws {
        let fixture = try ServerFixture()
        let minted = fixture.local("track.mp3").absoluteString
        let guessed = minted.replacingOccurrences(of: fixture.server.secret, with: "0123456789abcdef0123456789abcdef")
        #expect(try await Curl.run([guessed]).status == 403)
        // The right secret, but an origin the app never announced: not an open proxy.
        let other = URL(string: "http://127.0.0.1:1/elsewhere.mp3")!
        let base = fixture.server.baseURL!.absoluteString
        let path = ServerRoute.path(for: other, secret: fixture.server.secret)
        #expect(try await Curl.run([base + path]).status == 403)
        #expect(fixture.origin.requestCount == 0)
    }

    @Test func allowlistedOriginsNeedNoMinting() async throws {
        let fixture = try ServerFixture()
        // A host:port pattern names the origin exactly (a host alone allows port 80 and 443 only).
        let server = MediaServer(
            cache: fixture.cache,
            configuration: MediaServerConfiguration(allowlist: OriginAllowlist(["127.0.0.1:\(fixture.nginx.port)"])))
        try server.start()
        defer { server.stop() }
        let base = server.baseURL!.absoluteString
        let path = ServerRoute.path(for: fixture.originURL("track.mp3"), secret: server.secret)
        let result = try await Curl.run([base + path])
        let original = try ServerFixture.fixture("track.mp3")
        #expect(result.status == 200 && result.body == original)
    }

    @Test func originErrorsKeepTheirMeaning() async throws {
        let fixture = try ServerFixture()
        #expect(try await Curl.run([fixture.local("missing.mp3").absoluteString]).status == 404)
        #expect(try await Curl.run([fixture.local("gone").absoluteString]).status == 410)
        let failing = try await Curl.run([fixture.local("fail503").absoluteString])
        #expect(failing.status == 502)
        #expect(String(decoding: failing.body, as: UTF8.self).contains("503"))
        #expect(try await Curl.run(["-X", "POST", fixture.local("track.mp3").absoluteString]).status == 405)
    }
}
