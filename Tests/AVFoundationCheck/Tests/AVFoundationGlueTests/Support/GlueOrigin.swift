import CheckNginx
import Foundation
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#endif

/// A real nginx on a loopback port serving the committed audio fixtures
/// (Tests/MediaStreamingTests/Fixtures) with its own Range handling;
/// started once per test process, stopped by its watchdog at exit.
final class GlueServer: Sendable {
    static let shared: GlueServer = {
        do { return try GlueServer() } catch { fatalError("cannot start nginx: \(error)") }
    }()

    let nginx: LoopbackNginx

    /// The committed fixtures (shared with MediaStreamingTests), found
    /// above this file: Tests/MediaStreamingTests/Fixtures of the repository.
    static let fixtures: URL = {
        var directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("Tests/MediaStreamingTests/Fixtures")
            if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("track.mp3").path) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        fatalError("Tests/MediaStreamingTests/Fixtures not found above \(#filePath)")
    }()

    static func fixture(_ name: String) throws -> Data { try Data(contentsOf: fixtures.appendingPathComponent(name)) }

    private init() throws {
        signal(SIGPIPE, SIG_IGN)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "avglue-nginx-\(UUID().uuidString)")
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for name in ["track.mp3", "track.wav"] {
            try FileManager.default.copyItem(
                at: Self.fixtures.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        try FileManager.default.copyItem(
            at: Self.fixtures.appendingPathComponent("HLS"), to: root.appendingPathComponent("HLS"))
        nginx = try LoopbackNginx(serving: root, in: directory)
    }

    func url(_ path: String) -> URL { nginx.url(path) }
}

/// An origin in front of a real one that counts the requests and body bytes
/// it passes on and can slow the body down (a slow network, so that a
/// request is still running when the player cancels it).
final class CountingOrigin: Origin, @unchecked Sendable {
    let base: any Origin
    let delayPerPiece: Duration?
    private let lock = NSLock()
    private var requestCount = 0
    private var bytes = 0

    init(_ base: any Origin = HTTPOrigin(timeout: .seconds(10)), delayPerPiece: Duration? = nil) {
        self.base = base
        self.delayPerPiece = delayPerPiece
    }

    var requests: Int { lock.withLock { requestCount } }
    var bodyBytes: Int { lock.withLock { bytes } }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        lock.withLock { requestCount += 1 }
        var response = try await base.fetch(request)
        let body = response.body
        let delay = delayPerPiece
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task { [weak self] in
            do {
                for try await piece in body {
                    if let delay { try await Task.sleep(for: delay) }
                    self?.lock.withLock { self?.bytes += piece.count }
                    continuation.yield(piece)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        response.body = stream
        return response
    }
}
