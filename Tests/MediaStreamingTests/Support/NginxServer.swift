import Foundation
import LoopbackNginx
@_exported import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real nginx on a free loopback port (a ``LoopbackNginx``), serving a
/// temporary copy of the fixtures (plus extensionless copies) with nginx's
/// own Range, ETag and Last-Modified handling, `/maxage/` for the same
/// files with `Cache-Control: max-age=60`, `/slow/` for them at
/// ``slowRate`` bytes per second per response (nginx sends the first
/// second's worth at once, so only longer responses are paced), and
/// `/crawl/` at 32 KiB/s. Started once per test process;
/// its watchdog stops it when the test process exits.
final class NginxServer: Sendable {
    let root: URL
    let directory: URL
    private let nginx: LoopbackNginx

    /// Bytes per second per response under `/slow/` (nginx `limit_rate`):
    /// slow enough to watch transfers yield to one another.
    static let slowRate = 512 * 1024

    /// The server the tests share.
    static let shared: NginxServer = {
        do { return try NginxServer() } catch { fatalError("cannot start nginx: \(error)") }
    }()

    var port: Int { nginx.port }

    var baseURL: URL { nginx.baseURL }

    func url(_ path: String) -> URL { nginx.url(path) }

    private init() throws {
        // A connection nginx closes first must fail a write, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        directory = temporaryPath("streaming-nginx")
        root = directory.appendingPathComponent("root")
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: root, withIntermediateDirectories: true)
        for name in Fixtures.names {
            try fileManager.copyItem(at: Fixtures.url(name), to: root.appendingPathComponent(name))
            let bare = name.replacingOccurrences(of: ".", with: "-")
            try fileManager.copyItem(at: Fixtures.url(name), to: root.appendingPathComponent("noext-\(bare)"))
        }
        nginx = try LoopbackNginx(
            serving: root, in: directory,
            httpDirectives: "keepalive_requests 100000;",
            serverDirectives: """
                location /maxage/ { alias \(root.path)/; expires 60s; }
                location /slow/ { alias \(root.path)/; limit_rate \(Self.slowRate); sendfile_max_chunk 16k; }
                location /crawl/ { alias \(root.path)/; limit_rate 32k; sendfile_max_chunk 16k; }
                """)
    }

    /// Puts `data` at `path` under the root (for resources a test changes).
    func publish(_ data: Data, at path: String, modified: Date? = nil) throws {
        let url = root.appendingPathComponent(path)
        try data.write(to: url)
        if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
    }
}
