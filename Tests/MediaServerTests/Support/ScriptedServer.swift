import Foundation
import MediaServer
import MediaStore
import MediaStreaming
import MediaSupport
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A started ``MediaServer`` over a fresh store (16 KiB chunks) whose
/// origin is a ``ScriptedOrigin`` answering with `handler`: the base of the
/// hostile-server suites. Everything is stopped and removed on deinit.
///
/// Each fixture's ``HTTPOrigin`` gets a URLSession of its own (origins
/// share one session per idle timeout, at most 32 connections per host and
/// one delegate queue): its idle timeout is `originTimeout` plus a fraction
/// of a second unique to the fixture, so that a suite holding many silent
/// or flooding origin connections never queues another suite's requests
/// or callbacks behind its own.
final class ScriptedServer: @unchecked Sendable {
    static let chunkSize = 16 * 1024

    let directory: URL
    let origin: ScriptedOrigin
    let store: MediaStore
    let cache: StreamingCache
    let server: MediaServer

    init(
        configuration: MediaServerConfiguration,
        streaming: StreamingConfiguration = StreamingConfiguration(
            chunksPerRequest: 1, retryPolicy: RetryPolicy(maxRetries: 0), stallTimeout: .seconds(5)),
        originTimeout: TimeInterval = 7, handler: @escaping ScriptedOrigin.Handler
    ) throws {
        signal(SIGPIPE, SIG_IGN)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediaserver-scripted-\(UUID().uuidString)")
        origin = try ScriptedOrigin(handler: handler)
        store = try MediaStore(
            directory: directory.appendingPathComponent("store"),
            configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 64 << 20))
        cache = StreamingCache(
            store: store, origin: HTTPOrigin(timeout: .seconds(originTimeout + Self.nextSessionOffset())),
            configuration: streaming)
        server = MediaServer(cache: cache, configuration: configuration)
        try server.start()
    }

    deinit {
        server.stop()
        origin.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var port: Int { server.port ?? 0 }

    private static let sessions = Locked(0)

    /// A fraction of a second no other fixture of this process uses.
    private static func nextSessionOffset() -> TimeInterval {
        sessions.withLock { count in
            count += 1
            return Double(count) / 1024
        }
    }

    /// The local path (secret and encoded origin URL) a player asks for the origin's `path`.
    func localPath(_ path: String) -> String {
        let url = server.url(for: origin.url(path))
        return URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
    }

    /// One response as read off the socket.
    struct Response: Sendable {
        var status: Int?
        /// Header names lowercased.
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Sends `GET path` with `headers` and `Connection: close` on a new
    /// connection and reads the answer until the server closes or sends
    /// nothing for 30 s (a generous bound: the first answers of a run on a
    /// loaded machine take seconds; a hang still ends the test).
    func get(_ path: String, headers: [String: String] = [:]) async throws -> Response {
        let client = try RawClient(port: port)
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        client.send(head + "\r\n")
        let descriptor = client.descriptor
        let bytes = try await offPool { Self.readAll(descriptor) }
        return Self.parse(bytes)
    }

    static func readAll(_ descriptor: Int32) -> [UInt8] {
        var result = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            result += buffer[0..<count]
        }
        return result
    }

    static func parse(_ bytes: [UInt8]) -> Response {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
            return Response(status: nil, headers: [:], body: [])
        }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(
            status: RawClient.status(lines[0]), headers: headers, body: Array(bytes[end.upperBound...]))
    }

    /// Polls `condition` every 10 ms until it holds or `seconds` pass; returns whether it held.
    static func eventually(within seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        // A cancelled task's sleep throws at once: it stops instead of spinning.
        while ContinuousClock.now < deadline, !Task.isCancelled {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// Deterministic bytes.
    static func content(_ count: Int, seed: UInt64 = 0x5EED) -> Data {
        var state = seed
        return Data(
            (0..<count).map { _ in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return UInt8(truncatingIfNeeded: state >> 33)
            })
    }
}
