import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// `HTTPOrigin`s come and go in an app (one per cache, per download, per
/// test); the URLSessions under them must not. Tearing a URLSession down
/// crashes FoundationNetworking on Linux now and then (a SIGSEGV in
/// libdispatch's `_dispatch_event_loop_drain`, twice in CI), so origins
/// share process-wide sessions that are never torn down. What that means for
/// a caller: a response outlives the origin that fetched it.
@Suite("HTTPOrigin lifetime")
struct OriginLifetimeTests {
    /// Rounds of the churn test; `Tools/origin-churn` runs many more.
    static let churnRounds = ProcessInfo.processInfo.environment["MEDIACACHE_ORIGIN_CHURN"].flatMap(Int.init) ?? 40

    static func body(of response: OriginResponse, upTo limit: Int = .max) async throws -> Data {
        var data = Data()
        for try await piece in response.body {
            data.append(piece)
            if data.count >= limit { break }
        }
        return data
    }

    @Test func aResponseBodyOutlivesTheOriginThatFetchedIt() async throws {
        let expected = try Fixtures.data("track.flac")
        var origin: HTTPOrigin? = HTTPOrigin(timeout: .seconds(5))
        weak let weakOrigin = origin
        let response = try await origin!.fetch(OriginRequest(url: NginxServer.shared.url("/slow/track.flac")))
        #expect(response.statusCode == 200)
        origin = nil
        #expect(weakOrigin == nil, "the origin is still alive: the test proves nothing")
        let bytes = try await Self.body(of: response)
        #expect(bytes == expected, "\(bytes.count) of \(expected.count) bytes after the origin went away")
    }

    /// A body dropped without being read cancels its transfer (URLSession
    /// would otherwise download the rest into memory).
    @Test func aBodyDroppedUnreadStopsItsTransfer() async throws {
        try NginxServer.shared.publish(Data(repeating: 7, count: 4 << 20), at: "lifetime-large.bin")
        let timeout = 7.25  // a session of its own: no other test's tasks in the count
        let delegate = HTTPSessionPool.client(timeout: timeout).delegate
        let origin = HTTPOrigin(timeout: .seconds(timeout))
        // 4 MiB at 32 KiB/s: the transfer would last two minutes.
        var response: OriginResponse? = try await origin.fetch(
            OriginRequest(url: NginxServer.shared.url("/crawl/lifetime-large.bin")))
        #expect(response?.statusCode == 200)
        #expect(delegate.liveTaskCount == 1)
        response = nil
        for _ in 0..<100 where delegate.liveTaskCount > 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(delegate.liveTaskCount == 0, "the transfer of a dropped body is still running")
    }

    /// Origins created, used (a whole body, a body dropped half-way, a
    /// body left arriving, a refused connection) and dropped, on four tasks at once: every body is
    /// right and the process survives.
    @Test func originsComeAndGoWhileFetching() async throws {
        let expected = try Fixtures.data("track.mp3")
        let url = NginxServer.shared.url("/track.mp3")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for round in 0..<Self.churnRounds {
                        let origin = HTTPOrigin(timeout: .seconds(5))
                        let whole = try await Self.body(of: try await origin.fetch(OriginRequest(url: url)))
                        #expect(whole == expected, "worker \(worker) round \(round): \(whole.count) bytes")
                        let part = try await Self.body(of: try await origin.fetch(OriginRequest(url: url)), upTo: 1)
                        #expect(!part.isEmpty && expected.starts(with: part))
                        // A response still arriving when its origin goes away.
                        _ = try await origin.fetch(OriginRequest(url: NginxServer.shared.url("/crawl/track.mp3")))
                        do throws(OriginError) {
                            _ = try await origin.fetch(OriginRequest(url: URL(string: "http://127.0.0.1:9/refused")!))
                            Issue.record("a fetch from a closed port succeeded")
                        } catch {
                            #expect(error != .cancelled)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
