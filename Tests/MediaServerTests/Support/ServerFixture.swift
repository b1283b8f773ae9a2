import Foundation
import LoopbackNginx
import MediaServer
import MediaStore
import MediaStreaming
import StreamingTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A real nginx (the origin) serving the audio fixtures and a 3 MiB
/// pseudo-random file, a store with 16 KiB chunks, a streaming cache
/// over it through a `FakeOrigin`, and a started ``MediaServer``.
/// Everything is stopped and removed on deinit.
final class ServerFixture: @unchecked Sendable {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("MediaStreamingTests/Fixtures")
    static let bigLength = 3 << 20

    let directory: URL
    let nginx: LoopbackNginx
    let origin: FakeOrigin
    let store: MediaStore
    let cache: StreamingCache
    let server: MediaServer

    init(configuration: MediaServerConfiguration = MediaServerConfiguration(), delayPerPiece: Duration = .zero) throws {
        signal(SIGPIPE, SIG_IGN)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediaserver-test-\(UUID().uuidString)")
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path) {
            try FileManager.default.copyItem(
                at: Self.fixtures.appendingPathComponent(name), to: root.appendingPathComponent(name))
        }
        try Self.bigData.write(to: root.appendingPathComponent("big.bin"))
        try Self.longTrack.write(to: root.appendingPathComponent("long.wav"))
        nginx = try LoopbackNginx(
            serving: root, in: directory.appendingPathComponent("nginx"),
            httpDirectives: "keepalive_requests 100000;",
            serverDirectives: "location /fail503 { return 503; } location /gone { return 410; }")
        origin = FakeOrigin(pieceDelay: delayPerPiece)
        store = try MediaStore(
            directory: directory.appendingPathComponent("store"),
            configuration: StoreConfiguration(chunkSize: 16 * 1024, initialMapSize: 64 << 20))
        cache = StreamingCache(
            store: store, origin: origin,
            configuration: StreamingConfiguration(
                chunksPerRequest: 4, retryPolicy: RetryPolicy(maxRetries: 1), stallTimeout: .seconds(5)))
        server = MediaServer(cache: cache, configuration: configuration)
        try server.start()
    }

    deinit {
        server.stop()
        nginx.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Deterministic bytes for big.bin.
    static let bigData: Data = {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: bigLength)
        for index in stride(from: 0, to: bigLength, by: 8) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            withUnsafeBytes(of: state) { raw in
                for offset in 0..<min(8, bigLength - index) { bytes[index + offset] = raw[offset] }
            }
        }
        return Data(bytes)
    }()

    /// A 240 s mono 22.05 kHz WAV (about 10 MiB), made once by ffmpeg:
    /// long enough that a seek near its end is a real Range request.
    static let longTrack: Data = {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mediaserver-long-\(UUID().uuidString).wav")
        defer { try? FileManager.default.removeItem(at: file) }
        let process = try? ChildProcess(
            "ffmpeg",
            [
                "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=240", "-ac", "1", "-ar",
                "22050", file.path,
            ])
        process?.waitUntilExit()
        return (try? Data(contentsOf: file)) ?? Data()
    }()

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: fixtures.appendingPathComponent(name))
    }

    /// The origin URL of `name` on nginx.
    func originURL(_ name: String) -> URL { nginx.url(name) }

    /// The local URL a player opens for `name`.
    func local(_ name: String) -> URL { server.url(for: originURL(name)) }

    var port: Int { server.port ?? 0 }

    /// Waits (up to 10 s) until `name`'s entry is complete in the store.
    func waitUntilCached(_ name: String) async throws -> Bool {
        for _ in 0..<1000 {
            if cache.isCached(originURL(name)) { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }
}
