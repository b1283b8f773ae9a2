import Foundation
import LoopbackNginx
import MediaStore
import MediaSupport
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// Clients no player would be: slow heads, oversize heads, garbage, too
/// many connections. Each gets its status and the server lives on.
@Suite("MediaServer with hostile clients", .serialized, .timeLimit(.minutes(3)))
struct HostileClientTests {
    static let configuration = MediaServerConfiguration(
        limits: HTTPLimits(maxRequestLineBytes: 1024, maxHeadBytes: 4096, maxHeaderCount: 20), maxConnections: 4,
        idleTimeout: .seconds(1), requestTimeout: .seconds(1), sendTimeout: .seconds(2))

    func stillServes(_ fixture: ServerFixture) async throws -> Bool {
        let ping = try await Curl.run([fixture.server.baseURL!.absoluteString + "/ping"])
        return ping.status == 200
    }

    @Test func slowlorisGets408() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let client = try RawClient(port: fixture.port)
        // One byte every 300 ms: the head never completes within the 1 s
        // allowed. The client runs on its own thread, so the time measured
        // is the server's (it has its own threads) and not how long this
        // test waited for the cooperative pool on a loaded machine.
        let (answer, elapsed) = try await offPool {
            let started = ContinuousClock.now
            for character in "GET /ping HTTP/1.1\r\nHost: a\r\nX-Slow: " {
                guard client.send(String(character)) else { break }
                usleep(300_000)
                if ContinuousClock.now - started > .seconds(3) { break }
            }
            let answer = RawClient.readToEnd(client.descriptor)
            return (answer, ContinuousClock.now - started)
        }
        #expect(RawClient.status(answer) == 408, "\(answer)")
        // requestTimeout is 1 s; the loop gives up sending after 3 s.
        #expect(elapsed < .seconds(8), "\(elapsed)")
        #expect(try await stillServes(fixture))
    }

    @Test func idleConnectionIsClosedQuietly() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let client = try RawClient(port: fixture.port)
        // Timed on the client's own thread (see slowlorisGets408); the
        // client itself gives up after 10 s, the server's idleTimeout is 1 s.
        let (answer, elapsed) = try await offPool {
            let started = ContinuousClock.now
            return (RawClient.readToEnd(client.descriptor), ContinuousClock.now - started)
        }
        #expect(answer == "")
        #expect(elapsed < .seconds(6), "\(elapsed)")
        // The server counts the connection closed just after closing it.
        for _ in 0..<200 where fixture.server.statistics.activeConnections != 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.server.statistics.activeConnections == 0)
    }

    @Test func oversizeHeadsGet414And431() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let long = try RawClient(port: fixture.port)
        long.send("GET /" + String(repeating: "a", count: 2000) + " HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(RawClient.status(await long.readToEnd()) == 414)
        let big = try RawClient(port: fixture.port)
        big.send(
            "GET /ping HTTP/1.1\r\nHost: a\r\n"
                + String(repeating: "X-Filler: \(String(repeating: "b", count: 100))\r\n", count: 19))
        big.send(String(repeating: "X-More: \(String(repeating: "c", count: 500))\r\n", count: 10))
        #expect(RawClient.status(await big.readToEnd()) == 431)
        let many = try RawClient(port: fixture.port)
        many.send("GET /ping HTTP/1.1\r\nHost: a\r\n" + (0..<30).map { "X-\($0): y\r\n" }.joined() + "\r\n")
        #expect(RawClient.status(await many.readToEnd()) == 431)
        #expect(try await stillServes(fixture))
    }

    @Test func garbageGets400() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        for garbage in [
            "\u{16}\u{03}\u{01}\u{02}\u{00}\u{01}\u{00}\r\n\r\n", "hello\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",
        ] {
            let client = try RawClient(port: fixture.port)
            client.send(garbage)
            #expect(RawClient.status(await client.readToEnd()) == 400, "\(garbage.debugDescription)")
        }
        let newer = try RawClient(port: fixture.port)
        newer.send("GET /ping HTTP/3.0\r\nHost: a\r\n\r\n")
        #expect(RawClient.status(await newer.readToEnd()) == 505)
        #expect(try await stillServes(fixture))
    }

    @Test func connectionLimitGets503() async throws {
        // The holders' heads may take 3 s: the extra connection comes while
        // they hold their slots however slowly this test is scheduled.
        var configuration = Self.configuration
        configuration.requestTimeout = .seconds(3)
        let fixture = try ServerFixture(configuration: configuration)
        // Four connections in the middle of a head hold every slot.
        let holders = try (0..<4).map { _ in try RawClient(port: fixture.port) }
        for holder in holders { holder.send("GET /ping HTTP/1.1\r\n") }
        for _ in 0..<500 where fixture.server.statistics.activeConnections < 4 {
            try await Task.sleep(for: .milliseconds(2))
        }
        #expect(fixture.server.statistics.activeConnections == 4)
        let extra = try RawClient(port: fixture.port)
        let answer = await extra.readToEnd()
        #expect(RawClient.status(answer) == 503 && answer.contains("Retry-After: 1"), "\(answer)")
        #expect(fixture.server.statistics.connectionsRefused >= 1)
        // The holders time out (408) and the slots come back.
        for holder in holders { #expect(RawClient.status(await holder.readToEnd()) == 408) }
        #expect(try await stillServes(fixture))
    }

    /// A client that saw its connection closed finds the slot free: with
    /// one slot, each next connection is served, never refused with 503.
    @Test func aClosedConnectionsSlotIsFreeForTheNext() async throws {
        var configuration = Self.configuration
        configuration.maxConnections = 1
        let fixture = try ServerFixture(configuration: configuration)
        let port = fixture.port
        let statuses = try await offPool {
            var statuses: [Int?] = []
            for _ in 0..<300 {
                let client = try RawClient(port: port)
                client.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
                statuses.append(RawClient.status(RawClient.readToEnd(client.descriptor)))
            }
            return statuses
        }
        let refused = statuses.filter { $0 != 200 }
        #expect(refused.isEmpty, "\(refused.count) of \(statuses.count) not 200: \(Set(refused.map { $0 ?? -1 }))")
    }

    /// A connection still answering when `stop()` gives up waiting for it
    /// (2 s) is not this server's after a restart: it holds no slot, and
    /// the statistics do not count it.
    @Test func aConnectionOutlivingStopHoldsNoSlotAfterARestart() async throws {
        let held = DispatchSemaphore(value: 0)
        let answers = Locked(0)
        var configuration = Self.configuration
        configuration.maxConnections = 1
        configuration.connectionHooks.willAnswer = {
            let first = answers.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            if first { _ = held.wait(timeout: .now() + 20) }
        }
        let fixture = try ServerFixture(configuration: configuration)
        defer { held.signal() }
        let port = fixture.port
        let stuck = try RawClient(port: port)
        #expect(stuck.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n"))
        for _ in 0..<500 where answers.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try #require(answers.current == 1, "the first request never reached its answer")
        let server = fixture.server
        try await offPool {
            server.stop()
            try server.start()
        }
        #expect(server.statistics.activeConnections == 0, "the connection from before the stop is counted")
        let status = try await offPool {
            let client = try RawClient(port: port)
            _ = client.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            return RawClient.status(RawClient.readToEnd(client.descriptor))
        }
        #expect(status == 200, "refused by the slot of the connection from before the stop")
    }

    /// The thread that accepts a connection serves it, and hands accepting
    /// over before it waits or answers: a connection whose answer is held
    /// up (a responder slow to answer) never holds up the next connection.
    /// Each held request may reach the server before or after it first
    /// reads: 20 rounds, so that both happen.
    @Test func aHeldAnswerDoesNotHoldUpAccepting() async throws {
        let release = DispatchSemaphore(value: 0)
        let answers = Locked(0)
        var configuration = Self.configuration
        configuration.connectionHooks.willAnswer = {
            let held = answers.withLock { count -> Bool in
                count += 1
                return count % 2 == 1
            }
            if held { _ = release.wait(timeout: .now() + 20) }
        }
        let fixture = try ServerFixture(configuration: configuration)
        let port = fixture.port
        let request = "GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n"
        let rounds = try await offPool { () -> [(held: Int?, next: Int?)] in
            var rounds: [(held: Int?, next: Int?)] = []
            for round in 0..<20 {
                let held = try RawClient(port: port)
                held.send(request)
                for _ in 0..<1000 where answers.current < 2 * round + 1 { usleep(2000) }
                let next = try RawClient(port: port)
                var timeout = timeval(tv_sec: 3, tv_usec: 0)
                setsockopt(next.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                next.send(request)
                let nextStatus = RawClient.status(RawClient.readToEnd(next.descriptor))
                release.signal()
                rounds.append((RawClient.status(RawClient.readToEnd(held.descriptor)), nextStatus))
                if nextStatus != 200 { break }
            }
            return rounds
        }
        #expect(rounds.count == 20 && rounds.allSatisfy { $0.held == 200 && $0.next == 200 }, "\(rounds)")
    }

    /// Connections that come at once are accepted together, each but the
    /// last given to a thread of its own: a burst over the limit gets its
    /// 503s, the rest are all served, and the server serves on.
    @Test func aBurstOfConnectionsIsServed() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let port = fixture.port
        let statuses = try await offPool { () -> [Int?] in
            // Connected before any sends: they wait in the backlog together.
            let clients = try (0..<6).map { _ in try RawClient(port: port) }
            for client in clients {
                client.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            }
            return clients.map { RawClient.status(RawClient.readToEnd($0.descriptor)) }
        }
        // maxConnections is 4: the ones over it may get 503, the others 200.
        #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 }, "\(statuses)")
        #expect(statuses.filter { $0 == 200 }.count >= 4, "\(statuses)")
        #expect(try await stillServes(fixture))
    }

    /// `Duration` timeouts may be set past any wait a poll takes (as "no
    /// timeout"): the server serves, each wait capped, instead of trapping.
    @Test func timeoutsLongerThanAnyPollServe() async throws {
        let forever = Duration.seconds(Int64.max)
        let fixture = try ServerFixture(
            configuration: MediaServerConfiguration(
                idleTimeout: forever, requestTimeout: forever, sendTimeout: forever, originWaitTimeout: forever))
        #expect(try await stillServes(fixture))
        let url = fixture.local("track.mp3")
        let result = try await Curl.run([url.absoluteString])
        #expect(try result.status == 200 && result.body == ServerFixture.fixture("track.mp3"))
    }

    @Test func listenerRestartsOnTheSamePortAndMintedURLsStayValid() async throws {
        let listener = Locked<ListeningSocket?>(nil)
        var configuration = Self.configuration
        configuration.listenerHooks.opened = { socket in listener.withLock { $0 = socket } }
        let fixture = try ServerFixture(configuration: configuration)
        let url = fixture.local("track.mp3")
        let port = fixture.port
        listener.current?.breakListening()
        var restarted = false
        for _ in 0..<500 where !restarted {
            try await Task.sleep(for: .milliseconds(20))
            restarted = fixture.server.statistics.listenerRestarts >= 1
        }
        #expect(restarted)
        #expect(fixture.server.port == port)
        let result = try await Curl.run([url.absoluteString])
        let original = try ServerFixture.fixture("track.mp3")
        #expect(result.status == 200 && result.body == original)
        #expect(fixture.server.ensureListening())
    }

    /// After a stop, the port the minted URLs name may be held for a
    /// moment (a client connection's ephemeral port took it in one CI run):
    /// the restart waits for it instead of failing.
    @Test func restartWaitsForItsPortHeldForAMoment() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let port = fixture.port
        fixture.server.stop()
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = RawClient.loopback(port: port)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(holder, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(holder, 1) == 0)
        let closer = Thread {
            usleep(300_000)
            close(holder)
        }
        closer.start()
        let started = ContinuousClock.now
        try fixture.server.start()
        #expect(ContinuousClock.now - started >= .milliseconds(250))
        #expect(fixture.server.port == port)
        #expect(try await stillServes(fixture))
    }

    /// Stops and starts in a row, each with kept-alive and closed
    /// connections on reused threads: every request after a start is
    /// served, and every stop leaves no connection counted.
    @Test func stopsAndStartsWithReusedThreads() async throws {
        let fixture = try ServerFixture(configuration: Self.configuration)
        let port = fixture.port
        let server = fixture.server
        let outcome = try await offPool { () throws -> (statuses: [Int?], leftOver: [Int]) in
            var statuses: [Int?] = []
            var leftOver: [Int] = []
            for round in 0..<20 {
                // One kept alive across the stop, one closed, per round.
                let kept = try RawClient(port: port)
                kept.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
                // Its answer (the connection stays open after it).
                var head = [UInt8](repeating: 0, count: 4096)
                let count = head.withUnsafeMutableBytes { recv(kept.descriptor, $0.baseAddress, $0.count, 0) }
                statuses.append(RawClient.status(String(decoding: head.prefix(max(0, count)), as: UTF8.self)))
                let closed = try RawClient(port: port)
                closed.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
                statuses.append(RawClient.status(RawClient.readToEnd(closed.descriptor)))
                if round % 2 == 0 { usleep(2000) }
                server.stop()
                leftOver.append(server.statistics.activeConnections)
                // The stop closed the kept-alive connection.
                if RawClient.readToEnd(kept.descriptor) != "" { statuses.append(nil) }
                try server.start()
            }
            return (statuses, leftOver)
        }
        #expect(outcome.statuses.allSatisfy { $0 == 200 }, "\(outcome.statuses)")
        #expect(outcome.leftOver.allSatisfy { $0 == 0 }, "\(outcome.leftOver)")
        #expect(try await stillServes(fixture))
    }

    @Test func stopEndsEveryConnectionAndDownload() async throws {
        // A slow origin: the body is still arriving when the server stops.
        let fixture = try ServerFixture(delayPerPiece: .milliseconds(20))
        let url = fixture.local("big.bin").absoluteString
        let process = try ChildProcess("curl", ["-sS", "-o", "/dev/null", url])
        for _ in 0..<200 where fixture.server.statistics.bodyBytesSent == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(fixture.server.statistics.activeConnections == 1)
        let started = ContinuousClock.now
        fixture.server.stop()
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(fixture.server.statistics.activeConnections == 0)
        #expect(!fixture.server.isRunning)
        await process.exit()
        #expect(process.terminationStatus != 0, "curl saw the body cut short")
        // Started again: same port, same secret, the minted URL works.
        try fixture.server.start()
        let again = try await Curl.run(["-r", "0-99", url])
        #expect(again.status == 206 && again.body == ServerFixture.bigData[0..<100])
    }
}
