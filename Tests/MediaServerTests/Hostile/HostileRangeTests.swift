import Foundation
import MediaServer
import MediaStreaming
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `Range` headers built to break the server (RFC 9110 §14): 64-bit
/// boundaries, numbers beyond 64 bits, many ranges, an empty entry. Each
/// gets its answer at once, and a flood of them leaves the server answering.
/// Serialized: each test starts servers and floods them; together they would
/// starve a small machine.
@Suite("Hostile ranges", .serialized)
struct HostileRangeTests {
    static let length = 100_000
    static let content = ScriptedServer.content(length)

    /// A path of the origin, a `Range` value, the status it must get and,
    /// for a 200 or 206, the bytes of the content it must carry.
    struct Case: Sendable, CustomStringConvertible {
        var path = "/track.bin"
        var range: String
        var status: Int
        var body: Range<Int>?
        var description: String { "\(path) \(range.prefix(60))" }
    }

    static let cases: [Case] = [
        Case(range: "bytes=99999999999999999999-", status: 416),
        Case(range: "bytes=9223372036854775807-", status: 416),
        Case(range: "bytes=9223372036854775806-9223372036854775807", status: 416),
        Case(range: "bytes=9223372036854775807-9223372036854775807", status: 416),
        Case(range: "bytes=18446744073709551616-18446744073709551617", status: 416),
        Case(range: "bytes=-0", status: 416),
        Case(range: "bytes=100000-", status: 416),
        Case(range: "bytes=-99999999999999999999", status: 206, body: 0..<length),
        Case(range: "bytes=-9223372036854775807", status: 206, body: 0..<length),
        Case(range: "bytes=0-99999999999999999999", status: 206, body: 0..<length),
        Case(range: "bytes=99990-9223372036854775807", status: 206, body: 99990..<length),
        Case(range: "bytes=99999-", status: 206, body: 99999..<length),
        // Several disjoint ranges: the whole body; more than 64: ignored, the whole body too.
        Case(
            range: "bytes=" + (0..<64).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ","), status: 200,
            body: 0..<length),
        Case(
            range: "bytes=" + (0..<65).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ","), status: 200,
            body: 0..<length),
        Case(range: "bytes=5-1", status: 200, body: 0..<length),
        Case(path: "/empty.bin", range: "bytes=0-", status: 416),
        Case(path: "/empty.bin", range: "bytes=-1", status: 416),
    ]

    static func serving() throws -> ScriptedServer {
        try ScriptedServer(
            // A long origin wait (not what is tested): the full parallel run has kept a first answer
            // waiting over 30 s.
            configuration: MediaServerConfiguration(maxConnections: 64, originWaitTimeout: .seconds(120))
        ) { request, reply in
            // An empty file: a 200 with no body, whatever the range (as nginx answers).
            guard request.path != "/empty.bin" else { return reply.respond(status: 200, headers: ["ETag": "\"e\""]) }
            reply.serve(content, for: request)
        }
    }

    static func check(_ response: ScriptedServer.Response, _ item: Case) {
        #expect(response.status == item.status, "\(item)")
        if let body = item.body {
            #expect(response.body == Array(content[body]), "\(item)")
        }
        if item.status == 416 {
            let length = item.path == "/empty.bin" ? 0 : length
            #expect(response.headers["content-range"] == "bytes */\(length)", "\(item)")
        }
    }

    @Test(arguments: cases)
    func eachGetsItsAnswer(_ item: Case) async throws {
        let fixture = try Self.serving()
        let response = try await fixture.get(fixture.localPath(item.path), headers: ["Range": item.range])
        Self.check(response, item)
    }

    /// More hostile requests at once than the connection table holds: each
    /// is answered (or refused 503 while the table is full), and the server
    /// then answers `/ping`.
    @Test func aFloodLeavesTheServerAnswering() async throws {
        let fixture = try Self.serving()
        // First bytes at or past Int.max: each once held its connection forever.
        let boundaries = [0, 1, 3, 4].map { Self.cases[$0] }
        let items = (0..<80).map { boundaries[$0 % boundaries.count] }
        let paths = Dictionary(uniqueKeysWithValues: Set(items.map(\.path)).map { ($0, fixture.localPath($0)) })
        let responses = try await withThrowingTaskGroup(of: (Case, ScriptedServer.Response).self) { group in
            for item in items {
                group.addTask { (item, try await fixture.get(paths[item.path]!, headers: ["Range": item.range])) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(responses.count == items.count)
        for (item, response) in responses where response.status != 503 {
            Self.check(response, item)
        }
        #expect(responses.filter { $0.1.status == 416 }.count >= 16, "most were answered, not refused")
        let ping = try await fixture.get("/ping")
        #expect(ping.status == 200)
        #expect(await ScriptedServer.eventually(within: 2) { fixture.server.statistics.activeConnections == 0 })
    }

    /// A client that asks for bytes the origin never sends and hangs up
    /// frees its connection slot at once, whichever way it waited (the
    /// content information alone, or together with the first bytes).
    @Test(arguments: ["bytes=100-", "bytes=-100"])
    func aClientHangingUpFreesItsSlot(_ range: String) async throws {
        let fixture = try ScriptedServer(
            configuration: MediaServerConfiguration(originWaitTimeout: .seconds(30))
        ) { _, reply in
            reply.pause(8)
        }
        let path = fixture.localPath("/silent.bin")
        let client = try RawClient(port: fixture.port)
        client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(fixture.port)\r\nRange: \(range)\r\n\r\n")
        #expect(await ScriptedServer.eventually(within: 10) { !fixture.origin.requests.isEmpty })
        #expect(fixture.server.statistics.activeConnections == 1)
        _ = shutdown(client.descriptor, Int32(SHUT_RDWR))
        #expect(await ScriptedServer.eventually(within: 2) { fixture.server.statistics.activeConnections == 0 })
        #expect(fixture.server.statistics.clientsGoneWhileWaiting == 1)
    }

    /// An origin that never answers gets the player a 504 after the
    /// configured wait, on both ways of waiting.
    @Test(arguments: ["bytes=100-", "bytes=-100"])
    func aSilentOriginGets504(_ range: String) async throws {
        let fixture = try ScriptedServer(
            configuration: MediaServerConfiguration(originWaitTimeout: .milliseconds(500))
        ) { _, reply in
            reply.pause(8)
        }
        let started = ContinuousClock.now
        let response = try await fixture.get(fixture.localPath("/silent.bin"), headers: ["Range": range])
        #expect(response.status == 504)
        #expect(ContinuousClock.now - started < .seconds(6), "before the origin's own 7 s timeout")
        #expect(fixture.server.statistics.originWaitsTimedOut == 1)
    }

    /// An origin that stops sending mid-body (after the first chunk): the
    /// body is cut short (the head went out) after the configured wait, not
    /// after the loader's stall timeout (20 s here) or the origin's idle
    /// timeout (7 s; the origin pauses 8 s).
    @Test func anOriginStallingMidBodyIsLetGo() async throws {
        let content = Self.content
        let fixture = try ScriptedServer(
            configuration: MediaServerConfiguration(originWaitTimeout: .seconds(3)),
            streaming: StreamingConfiguration(
                chunksPerRequest: 1, retryPolicy: RetryPolicy(maxRetries: 0), stallTimeout: .seconds(20))
        ) { request, reply in
            let range = request.range ?? 0..<content.count
            guard range.lowerBound > 0 else { return reply.serve(content, for: request) }
            let upper = min(range.upperBound, content.count)
            reply.head(
                status: 206,
                headers: [
                    "Content-Range": "bytes \(range.lowerBound)-\(upper - 1)/\(content.count)",
                    "Content-Length": String(upper - range.lowerBound), "ETag": "\"v1\"",
                ])
            reply.send(content.subdata(in: range.lowerBound..<range.lowerBound + 1000))
            reply.pause(8)
        }
        let started = ContinuousClock.now
        let response = try await fixture.get(fixture.localPath("/stalling.bin"), headers: ["Range": "bytes=0-"])
        #expect(response.status == 206)
        #expect(response.headers["content-length"] == String(content.count))
        #expect(response.body.count >= ScriptedServer.chunkSize && response.body.count < content.count)
        #expect(response.body == Array(content.prefix(response.body.count)))
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(fixture.server.statistics.originWaitsTimedOut == 1)
        #expect(fixture.server.statistics.responsesCut == 1)
    }
}
