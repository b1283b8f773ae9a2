import Foundation
import MediaServer
import MediaStreaming
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Every kind of hostile request of the server's range and origin-wait
/// defences against one server, while the test process's anonymous
/// resident memory (the server runs in it) is sampled: it stays within
/// ``MediaServerConfiguration/clientMemoryBound`` plus a margin for the
/// rest of the process (threads, the origin's transfers, the test's own
/// buffers, and the other suites running meanwhile in the same process).
/// Holding the bodies the idle clients asked for would take 60 × 8 MiB,
/// well over it.
@Suite("Hostile memory")
struct HostileMemoryTests {
    /// Room beyond the server's bound for everything else the process does
    /// meanwhile: alone the growth is a few MiB; with every suite in parallel,
    /// about 150 MiB was measured.
    static let margin = 192 << 20

    /// Samples the anonymous resident bytes (`/proc/self/statm`: resident
    /// minus file-backed and shared) every few milliseconds on a thread of its own.
    final class Sampler: @unchecked Sendable {
        private let lock = NSLock()
        private var running = true
        private var highest = 0
        private let done = DispatchSemaphore(value: 0)

        static func anonymousResident() -> Int {
            guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
            let fields = text.split(separator: " ").compactMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            guard fields.count >= 3 else { return 0 }
            return (fields[1] - fields[2]) * Int(sysconf(Int32(_SC_PAGESIZE)))
        }

        func start() {
            Thread { [self] in
                while lock.withLock({ running }) {
                    let now = Self.anonymousResident()
                    lock.withLock { highest = max(highest, now) }
                    usleep(5_000)
                }
                done.signal()
            }.start()
        }

        /// Stops sampling; the highest value seen.
        func stop() -> Int {
            lock.withLock { running = false }
            done.wait()
            return lock.withLock { highest }
        }
    }

    @Test func hostileClientsStayWithinTheBound() async throws {
        let small = ScriptedServer.content(100_000)
        let big = ScriptedServer.content(8 << 20, seed: 7)
        let configuration = MediaServerConfiguration(
            maxConnections: 64, responseBufferBytes: 64 << 10, originWaitTimeout: .milliseconds(500))
        let fixture = try ScriptedServer(configuration: configuration, originTimeout: 4) { request, reply in
            switch request.path {
            case "/big.bin": reply.serve(big, for: request)
            case "/empty.bin": reply.serve(Data(), for: request)
            case "/silent.bin": reply.pause(3)
            case "/stall.bin":
                reply.head(
                    status: 206,
                    headers: [
                        "Content-Range": "bytes 0-\(small.count - 1)/\(small.count)",
                        "Content-Length": String(small.count),
                    ])
                reply.send(small.prefix(1000))
                reply.pause(3)
            default: reply.serve(small, for: request)
            }
        }
        let paths = Dictionary(
            uniqueKeysWithValues: ["/track.bin", "/empty.bin", "/big.bin", "/silent.bin", "/stall.bin"].map {
                ($0, fixture.localPath($0))
            })
        let sampler = Sampler()
        let baseline = Sampler.anonymousResident()
        sampler.start()
        for _ in 0..<2 {
            // Clients that ask for a large body and read nothing.
            let idle = try (0..<60).map { _ in try RawClient(port: fixture.port, receiveBuffer: 4096) }
            for client in idle {
                client.send("GET \(paths["/big.bin"]!) HTTP/1.1\r\nHost: 127.0.0.1:\(fixture.port)\r\n\r\n")
            }
            var sent = -1
            _ = await ScriptedServer.eventually(within: 3) {
                let now = fixture.server.statistics.bodyBytesSent
                defer { sent = now }
                return now == sent && now > 0
            }
            _ = idle.map { shutdown($0.descriptor, Int32(SHUT_RDWR)) }
            #expect(await ScriptedServer.eventually(within: 3) { fixture.server.statistics.activeConnections == 0 })

            // Every hostile range, a silent origin, one that stalls, clients that hang up.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for item in HostileRangeTests.cases {
                    let path = item.path == "/empty.bin" ? paths["/empty.bin"]! : paths["/track.bin"]!
                    group.addTask { _ = try await fixture.get(path, headers: ["Range": item.range]) }
                }
                for index in 0..<6 {
                    group.addTask {
                        _ = try await fixture.get(paths["/silent.bin"]!, headers: ["Range": "bytes=\(index)-"])
                    }
                    group.addTask { _ = try await fixture.get(paths["/stall.bin"]!) }
                    group.addTask {
                        let client = try RawClient(port: fixture.port)
                        client.send(
                            "GET \(paths["/silent.bin"]!) HTTP/1.1\r\nHost: 127.0.0.1:\(fixture.port)\r\nRange: bytes=-\(index + 1)\r\n\r\n"
                        )
                        try await Task.sleep(for: .milliseconds(100))
                        _ = shutdown(client.descriptor, Int32(SHUT_RDWR))
                    }
                }
                try await group.waitForAll()
            }
            #expect(await ScriptedServer.eventually(within: 3) { fixture.server.statistics.activeConnections == 0 })
        }
        let peak = sampler.stop()
        let growth = peak - baseline
        print(
            "hostile memory: baseline \(baseline >> 20) MiB, peak \(peak >> 20) MiB, growth \(growth >> 10) KiB, bound \(configuration.clientMemoryBound >> 10) KiB + \(Self.margin >> 20) MiB"
        )
        #expect(growth < configuration.clientMemoryBound + Self.margin)
        let ping = try await fixture.get("/ping")
        #expect(ping.status == 200)
    }
}
