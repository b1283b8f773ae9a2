import Foundation
import LoopbackNginx

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The shape of the simulated link: what `Tools/shaping-proxy` applies to
/// each direction of each connection.
struct LinkShape: Sendable {
    /// One-way delay in seconds (a round trip is twice this).
    var delay: Double
    /// Bytes per second per connection and direction.
    var rate: Double

    var roundTrip: Double { 2 * delay }

    /// "25 ms each way, 2.5 MB/s per connection".
    var description: String {
        String(format: "%.0f ms each way, %.2f MB/s per connection", delay * 1000, rate / 1e6)
    }

    /// The fastest `bytes` can arrive over `connections` connections of this
    /// link, fetched as `requests` requests that are not pipelined: the
    /// handshake's round trip, one round trip per request on its connection
    /// (requests spread evenly, each waits for the one before it), and
    /// `serialRequests` more round trips for requests nothing else can
    /// overlap (a master playlist read before anything else is known), plus
    /// the bytes at the connections' summed rate.
    func limitSeconds(bytes: Int, requests: Int, connections: Int, serialRequests: Int = 0) -> Double {
        let perConnection = (requests + connections - 1) / connections
        return Double(bytes) / (Double(connections) * rate)
            + roundTrip * Double(1 + perConnection + serialRequests)
    }
}

/// `Tools/shaping-proxy` running in front of an origin on loopback: one
/// instance, on a port of its own, so that no client has a connection to
/// it yet when it starts (a cold start really is cold).
///
/// The proxy stops by itself after `lifetime` seconds and when this process
/// is gone (it watches its parent's pid); ``stop()`` ends it at once.
final class ShapingProxy {
    let port: Int
    private let process: ChildProcess

    /// Where the proxy script is: `MEDIACACHE_SHAPING_PROXY`, else
    /// `Tools/shaping-proxy` of this source tree, else of the current directory.
    static func scriptPath() -> String? {
        if let path = ProcessInfo.processInfo.environment["MEDIACACHE_SHAPING_PROXY"] { return path }
        let tree = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/shaping-proxy").path
        let here = FileManager.default.currentDirectoryPath + "/Tools/shaping-proxy"
        return [tree, here].first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Starts a proxy to `127.0.0.1:upstreamPort` with `shape`, and waits (at
    /// most 15 s) until it listens.
    init(
        python: ExternalTool, script: String, upstreamPort: Int, shape: LinkShape, lifetime: Double, scratch: URL
    ) throws {
        let portFile = scratch.appendingPathComponent("proxy-\(UInt32.random(in: 0...UInt32.max)).port")
        defer { try? FileManager.default.removeItem(at: portFile) }
        do {
            process = try ChildProcess(
                python.path,
                [
                    script, "--upstream", "127.0.0.1:\(upstreamPort)", "--delay-ms", String(shape.delay * 1000),
                    "--rate", String(shape.rate), "--port-file", portFile.path, "--lifetime", String(Int(lifetime)),
                    "--parent-pid", String(getpid()),
                ],
                standardError: scratch.appendingPathComponent("shaping-proxy.log").path)
        } catch {
            throw ExternalTool.Failure(description: "shaping-proxy: \(error.description)")
        }
        for _ in 0..<1500 where process.isRunning {
            if let text = try? String(contentsOf: portFile, encoding: .utf8),
                let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
            {
                self.port = port
                return
            }
            usleep(10_000)
        }
        process.kill(SIGKILL)
        process.waitUntilExit()
        throw ExternalTool.Failure(description: "shaping-proxy did not start listening within 15 s")
    }

    /// The URL of `path` through the proxy.
    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    func stop() {
        process.kill(SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// The origin's own count of requests per connection, from nginx's access
/// log written as `$connection $connection_requests $status $body_bytes_sent`.
struct ConnectionReuse: Equatable, Sendable {
    var requests = 0
    var connections = 0
    var mostOnOneConnection = 0

    /// Counts the log lines `lines` (unparseable lines are skipped).
    init(lines: some Sequence<Substring>) {
        var perConnection: [Substring: Int] = [:]
        for line in lines {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, Int(fields[0]) != nil, Int(fields[1]) != nil else { continue }
            perConnection[fields[0], default: 0] += 1
            requests += 1
        }
        connections = perConnection.count
        mostOnOneConnection = perConnection.values.max() ?? 0
    }

    var description: String {
        String(
            format: "%d requests over %d connections (%.1f per connection, at most %d on one)", requests, connections,
            connections > 0 ? Double(requests) / Double(connections) : 0, mostOnOneConnection)
    }
}
