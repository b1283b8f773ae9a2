import Foundation
import HLSPlaylist
import MediaStore
import MediaStreaming
import TestSupport
import Testing

@testable import MediaHLS
@testable import MediaServer

/// The responder's decisions, without a socket: routing, the `Host`
/// check and the secret, the allowlist, status mapping, and the plans of
/// media and HLS answers once the origin's part is in hand.
@Suite struct ResponderTests {
    static let secret = "s3cret"
    static let port = 8080
    static let origin = URL(string: "https://cdn.example.com/a/track.mp3")!

    /// A router for a loopback server on ``port`` with ``secret``; `allowlist` besides what is minted.
    static func router(allowlist: OriginAllowlist = OriginAllowlist()) -> Router {
        Router(
            secret: secret, hostCheck: HostCheck(advertisedHost: "127.0.0.1", port: port, loopbackOnly: true),
            permissions: OriginPermissions(allowlist: allowlist, mintedBudget: 1 << 20))
    }

    static func request(
        _ target: String, method: String = "GET", host: String? = "127.0.0.1:8080", _ headers: [(String, String)] = []
    ) -> HTTPRequest {
        let fields = (host.map { [("Host", $0)] } ?? []) + headers
        return HTTPRequest(method: method, target: target, headers: fields.map { (name: $0.0, value: $0.1) })
    }

    static func mediaPath(_ url: URL = origin) -> String { ServerRoute.path(for: url, secret: secret) }

    static func status(_ decision: Router.Decision) -> Int? {
        if case .refuse(let status, _, _, _) = decision { return status }
        return nil
    }

    // MARK: Routing and authorisation

    @Test func pingNeedsNoSecretButAHost() {
        let router = Self.router()
        #expect(router.decide(Self.request("/ping")) == .ping)
        #expect(Self.status(router.decide(Self.request("/ping", host: nil))) == 400)
    }

    @Test func onlyGetAndHeadWithAnAllowField() {
        let decision = Self.router().decide(Self.request("/ping", method: "POST"))
        #expect(
            decision == .refuse(status: 405, reason: "only GET and HEAD", closesConnection: false, allow: "GET, HEAD"))
    }

    @Test func anotherHostIsRefusedBeforeTheSecretAndClosesTheConnection() {
        let router = Self.router()
        router.permissions.mint(Self.origin)
        // A rebinding page sends its own name, even with a good local URL.
        let decision = router.decide(Self.request(Self.mediaPath(), host: "evil.example:8080"))
        guard case .refuse(let status, _, let closes, _) = decision else {
            Issue.record("not refused: \(decision)")
            return
        }
        #expect(status == 421 && closes)
        #expect(Self.status(router.decide(Self.request(Self.mediaPath(), host: "127.0.0.1:9999"))) == 421)
        let repeated = Self.request(Self.mediaPath(), host: "127.0.0.1:8080", [("Host", "127.0.0.1:8080")])
        #expect(Self.status(router.decide(repeated)) == 400)
        #expect(Self.status(router.decide(Self.request(Self.mediaPath(), host: ""))) == 400)
        #expect(router.decide(Self.request(Self.mediaPath(), host: "LOCALHOST:8080")) == .media(Self.origin))
    }

    @Test func theSecretIsChecked() {
        let router = Self.router()
        router.permissions.mint(Self.origin)
        let wrong = ServerRoute.path(for: Self.origin, secret: "other")
        #expect(Self.status(router.decide(Self.request(wrong))) == 403)
        #expect(Self.status(router.decide(Self.request("/"))) == 403)
        #expect(Self.status(router.decide(Self.request("/\(Self.secret)/x/y"))) == 404)
        #expect(router.decide(Self.request(Self.mediaPath())) == .media(Self.origin))
    }

    @Test func aTargetThatIsNotAPathIsABadRequestThatCloses() {
        let decision = Self.router().decide(Self.request("http://127.0.0.1:8080/ping"))
        #expect(
            decision == .refuse(status: 400, reason: "the target must be a path", closesConnection: true, allow: nil))
    }

    @Test func onlyMintedOrAllowlistedOriginsAreFetched() throws {
        let router = Self.router(allowlist: try OriginAllowlist(validating: ["media.example.org"]))
        #expect(Self.status(router.decide(Self.request(Self.mediaPath()))) == 403, "not minted, not allowed")
        router.permissions.mint(Self.origin)
        #expect(router.decide(Self.request(Self.mediaPath())) == .media(Self.origin))
        let allowed = URL(string: "https://media.example.org/b.m3u8")!
        let route = HLSRoute(origin: allowed, kind: .masterPlaylist)
        #expect(router.decide(Self.request(route.path(secret: Self.secret))) == .hls(route))
        let other = HLSRoute(origin: URL(string: "http://127.0.0.1:9/p.m3u8")!, kind: .mediaPlaylist)
        guard case .refuse(403, let reason, false, nil) = router.decide(Self.request(other.path(secret: Self.secret)))
        else {
            Issue.record("a loopback origin not named was not refused")
            return
        }
        #expect(reason.contains("not named by the allowlist"))
    }

    // MARK: Replies

    @Test func immediateRepliesAreCompleteTexts() throws {
        let directory = temporaryPath("responder")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = StreamingCache(store: try MediaStore(directory: directory))
        let permissions = OriginPermissions(allowlist: OriginAllowlist(), mintedBudget: 1 << 20)
        let responder = Responder(
            router: Self.router(), address: LocalAddress(host: "127.0.0.1", port: Self.port, secret: Self.secret),
            loaders: LoaderPool(cache: cache),
            hls: HLSResponder(
                resources: HLSResourceStore(cache: cache), rewriteBudget: 1 << 20, permissions: permissions,
                activity: ServerActivity()),
            responseBufferBytes: 1 << 16)
        guard case .now(let ping) = responder.respond(to: Self.request("/ping")),
            case .message(let text) = ping.body
        else {
            Issue.record("/ping is not answered at once")
            return
        }
        #expect(ping.status == 200 && text == Data("ok\n".utf8) && ping.report == .quiet)
        guard case .now(let refusal) = responder.respond(to: Self.request("/", method: "HEAD")),
            case .message(let none) = refusal.body
        else {
            Issue.record("a forbidden HEAD is not answered at once")
            return
        }
        #expect(refusal.status == 403 && none.isEmpty && refusal.head.value("Content-Length") == "10")
        #expect(refusal.report == .refused(reason: "forbidden"))
        guard case .now(let misdirected) = responder.respond(to: Self.request("/ping", host: "evil:1")) else {
            Issue.record("a misdirected request is not answered at once")
            return
        }
        #expect(misdirected.status == 421 && misdirected.closesConnection)
    }

    // MARK: Media plans

    /// A body stream that records the range it was made for and gives nothing.
    final class RecordedStream: BodyStream, @unchecked Sendable {
        let range: Range<Int>
        init(_ range: Range<Int>) { self.range = range }
        func start() {}
        func next(until deadline: Date) -> BodyStep { .end }
        func cancel() {}
    }

    static func media(
        _ headers: [(String, String)], method: String = "GET",
        information: Result<ContentInformation, StreamingError> = .success(
            ContentInformation(mimeType: "audio/mpeg", contentLength: 1000, etag: "\"v1\""))
    ) -> (Response, Range<Int>?) {
        var made: Range<Int>?
        let response = Responder.mediaResponse(
            to: request(mediaPath(), method: method, headers), origin: origin, information: information
        ) { range in
            made = range
            return RecordedStream(range)
        }
        return (response, made)
    }

    @Test func aRangeIsStreamedFromItsFirstByte() {
        let (response, made) = Self.media([("Range", "bytes=100-199")])
        #expect(response.status == 206 && made == 100..<200)
        #expect(response.head.value("Content-Range") == "bytes 100-199/1000")
        guard case .stream(let stream, let length) = response.body else {
            Issue.record("no stream")
            return
        }
        #expect(length == 100 && (stream as? RecordedStream)?.range == 100..<200)
        #expect(response.report == .served(origin: Self.origin))
    }

    @Test func headAndNotModifiedAndUnsatisfiableStreamNothing() {
        let (head, headBody) = Self.media([], method: "HEAD")
        #expect(head.status == 200 && headBody == nil && head.head.value("Content-Length") == "1000")
        let (notModified, notModifiedBody) = Self.media([("If-None-Match", "\"v1\"")])
        #expect(notModified.status == 304 && notModifiedBody == nil)
        let (unsatisfiable, unsatisfiableBody) = Self.media([("Range", "bytes=5000-")])
        #expect(unsatisfiable.status == 416 && unsatisfiableBody == nil)
        guard case .message(let text) = unsatisfiable.body else {
            Issue.record("a 416 without its text")
            return
        }
        #expect(String(decoding: text, as: UTF8.self).contains("the length is 1000"))
    }

    @Test func originFailuresBecomeStatusesBeforeAnyByte() {
        let url = Self.origin
        let cases: [(StreamingError, Int)] = [
            (.origin(.httpStatus(code: 404, url: url)), 404),
            (.origin(.httpStatus(code: 416, url: url)), 502),
            (.origin(.httpStatus(code: 503, url: url)), 502),
            (.origin(.stalled(seconds: 5)), 504),
            (.origin(.connectionLost(reason: "reset")), 502),
            (.outOfRange(offset: 5000, length: 1000), 416),
            (.cancelled, 503),
            (.resourceChanged(url: url), 502),
        ]
        for (error, status) in cases {
            let (response, made) = Self.media([], information: .failure(error))
            #expect(response.status == status && made == nil, "\(error)")
            guard case .refused = response.report else {
                Issue.record("\(error) not reported as a refusal")
                continue
            }
        }
    }

    @Test func aBodyWithoutItsFirstByteIsAnErrorStatus() {
        #expect(Responder.firstBytesMissing(.ended, method: "GET").status == 502)
        #expect(Responder.firstBytesMissing(.timedOut, method: "GET").status == 504)
        let failed = Responder.firstBytesMissing(.failed(.origin(.stalled(seconds: 1))), method: "HEAD")
        guard case .message(let text) = failed.body else {
            Issue.record("no message")
            return
        }
        #expect(failed.status == 504 && text.isEmpty)
    }

    // MARK: HLS plans

    static let route = HLSRoute(origin: URL(string: "https://cdn.example.com/p.m3u8")!, kind: .mediaPlaylist)

    static func hls(
        _ headers: [(String, String)], method: String = "GET", outcome: Result<Responder.HLSAnswer, HLSResourceError>
    ) -> Response {
        Responder.hlsResponse(
            to: request(route.path(secret: secret), method: method, headers), route: route, outcome: outcome
        ) { _, _, range in RecordedStream(range) }
    }

    @Test func aPlaylistInHandIsSentWholeOrByRange() {
        let playlist = Data("#EXTM3U\n#EXT-X-ENDLIST\n".utf8)
        let answer = Responder.HLSAnswer(
            body: .bytes(playlist), key: HLSResourceKey(key: "k", byteRange: nil), mimeType: HLSContentType.playlist)
        let whole = Self.hls([], outcome: .success(answer))
        guard case .bytes(let all) = whole.body else {
            Issue.record("no bytes")
            return
        }
        #expect(whole.status == 200 && all == playlist)
        let part = Self.hls([("Range", "bytes=1-6")], outcome: .success(answer))
        guard case .bytes(let some) = part.body else {
            Issue.record("no bytes")
            return
        }
        #expect(part.status == 206 && some == Data("EXTM3U".utf8))
        let head = Self.hls([], method: "HEAD", outcome: .success(answer))
        guard case .message(let none) = head.body else {
            Issue.record("a HEAD with a body")
            return
        }
        #expect(head.status == 200 && none.isEmpty && head.head.value("Content-Length") == "\(playlist.count)")
    }

    @Test func hlsFailuresBecomeStatuses() {
        let url = Self.route.origin
        #expect(Self.hls([], outcome: .failure(.resourceTooLarge(url: url, bytes: 9, limit: 8))).status == 502)
        #expect(Self.hls([], outcome: .failure(.streaming(.origin(.httpStatus(code: 403, url: url))))).status == 403)
        #expect(
            Self.hls([], outcome: .failure(.playlist(url: url, PlaylistError(line: 1, reason: .missingHeader)))).status
                == 502)
    }
}
