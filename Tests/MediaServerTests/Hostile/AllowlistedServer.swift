import Foundation
import MediaServer
import MediaStore
import MediaStreaming

#if canImport(Glibc)
    import Glibc
#endif

/// A started ``MediaServer`` over a fresh store whose origin is an
/// ``HTTPOrigin`` judging every redirect hop by the server's allowlist (as
/// `cachetool serve` builds it), for the hostile-origin suites that script
/// their origins with `ScriptedOrigin`. Stopped and removed on deinit.
final class AllowlistedServer: @unchecked Sendable {
    let directory: URL
    let cache: StreamingCache
    let server: MediaServer

    init(allowlist: OriginAllowlist) throws {
        signal(SIGPIPE, SIG_IGN)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("scripted-server-\(UUID())")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16 * 1024, initialMapSize: 16 << 20))
        cache = StreamingCache(
            store: store, origin: HTTPOrigin(timeout: .seconds(5), redirects: allowlist.redirectPolicy()),
            configuration: StreamingConfiguration(
                chunksPerRequest: 4, retryPolicy: RetryPolicy(maxRetries: 1), stallTimeout: .seconds(5)))
        server = MediaServer(cache: cache, configuration: MediaServerConfiguration(allowlist: allowlist))
        try server.start()
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `http://127.0.0.1:port` of the server.
    var base: String { server.baseURL!.absoluteString }

    /// The local URL of `origin` as a media resource, not minted (the allowlist must allow it).
    func unminted(_ origin: URL) -> String { base + ServerRoute.path(for: origin, secret: server.secret) }
}
