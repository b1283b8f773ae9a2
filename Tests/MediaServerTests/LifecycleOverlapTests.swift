import Foundation
import MediaStore
import MediaStreaming
import MediaSupport
import TestSupport
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// `start()` and `stop()` called at once on two threads: whichever goes
/// last decides, and the server is then wholly in that state (the accept
/// loop of the last start runs and answers; after the last stop, every
/// listening socket is closed when `stop()` returns).
@Suite("MediaServer start and stop overlapping", .timeLimit(.minutes(1)))
struct LifecycleOverlapTests {
    /// Every listening socket opened, and how many times each was closed.
    final class Sockets: Sendable {
        private let log = Locked<(opened: [ListeningSocket], closes: [ObjectIdentifier: Int])>(([], [:]))

        func opened(_ socket: ListeningSocket) { log.withLock { $0.opened.append(socket) } }
        func closed(_ socket: ListeningSocket) { log.withLock { $0.closes[ObjectIdentifier(socket), default: 0] += 1 } }

        /// Sockets opened and never closed.
        var open: Int { log.withLock { log in log.opened.filter { log.closes[ObjectIdentifier($0)] == nil }.count } }
        /// Sockets closed more than once.
        var closedAgain: Int { log.withLock { $0.closes.values.filter { $0 > 1 }.count } }
    }

    /// The status of `GET /ping` on 127.0.0.1:`port`, or `nil` when nothing answers.
    func ping(_ port: Int) async -> Int? {
        guard let client = try? RawClient(port: port) else { return nil }
        client.send("GET /ping HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        return RawClient.status(await client.readToEnd())
    }

    @Test("After overlapping starts and stops, the last start answers and the last stop leaves nothing open")
    func overlappingStartAndStop() async throws {
        let sockets = Sockets()
        let directory = temporaryPath("lifecycle-overlap")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(directory: directory)
        var configuration = MediaServerConfiguration()
        configuration.listenerHooks.opened = { sockets.opened($0) }
        // Closing takes a while, so a stop is still waiting for its accepting thread when the start comes.
        configuration.listenerHooks.closed = { socket, _ in
            sockets.closed(socket)
            usleep(20_000)
        }
        let server = MediaServer(cache: StreamingCache(store: store), configuration: configuration)
        try server.start()
        let port = try #require(server.port)
        for round in 0..<8 {
            let failures = try await offPool { () -> Int in
                let failed = Locked(0)
                DispatchQueue.concurrentPerform(iterations: 2) { side in
                    if side == 0 {
                        server.stop()
                    } else {
                        usleep(5_000)
                        do { try server.start() } catch { failed.withLock { $0 += 1 } }
                    }
                }
                return failed.current
            }
            #expect(failures == 0, "round \(round): start failed")
            try server.start()
            #expect(server.isRunning)
            #expect(await ping(port) == 200, "round \(round): the last start does not answer")
        }
        server.stop()
        #expect(!server.isRunning)
        #expect(sockets.open == 0, "a listening socket stayed open after the last stop")
        #expect(sockets.closedAgain == 0)
        #expect(await ping(port) == nil, "something still answers after the last stop")
    }
}
