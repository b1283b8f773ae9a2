import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A real nginx on a free loopback port, serving a temporary copy of the
/// fixtures (plus extensionless copies) with nginx's own Range, ETag and
/// Last-Modified handling. Started once per test process; a watchdog
/// shell stops it when the test process exits.
final class NginxServer: Sendable {
    let root: URL
    let port: Int
    let directory: URL

    /// The server the tests share.
    static let shared: NginxServer = {
        do { return try NginxServer() } catch { fatalError("cannot start nginx: \(error)") }
    }()

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    private init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mediastreaming-nginx-\(UUID().uuidString)")
        root = directory.appendingPathComponent("root")
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: root, withIntermediateDirectories: true)
        try fileManager.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        for name in Fixtures.names {
            try fileManager.copyItem(at: Fixtures.url(name), to: root.appendingPathComponent(name))
            let bare = name.replacingOccurrences(of: ".", with: "-")
            try fileManager.copyItem(at: Fixtures.url(name), to: root.appendingPathComponent("noext-\(bare)"))
        }
        var lastError = ""
        for _ in 0..<5 {
            let port = Self.freePort()
            if try Self.start(directory: directory, root: root, port: port) {
                self.port = port
                return
            }
            lastError = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        }
        throw FixtureFailure(message: "nginx did not start: \(lastError)")
    }

    /// Writes the config, starts nginx under a watchdog, waits for the port.
    private static func start(directory: URL, root: URL, port: Int) throws -> Bool {
        // A connection nginx closes first must fail a write, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        let d = directory.path
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log;
            events { worker_connections 256; }
            http {
              access_log \(d)/access.log;
              client_body_temp_path \(d)/tmp;
              proxy_temp_path \(d)/tmp;
              fastcgi_temp_path \(d)/tmp;
              uwsgi_temp_path \(d)/tmp;
              scgi_temp_path \(d)/tmp;
              keepalive_requests 100000;
              types {
                audio/mpeg mp3; audio/mp4 m4a; audio/aac aac; audio/flac flac;
                audio/ogg ogg opus; audio/wav wav;
              }
              default_type application/octet-stream;
              server {
                listen 127.0.0.1:\(port);
                root \(root.path);
                location /maxage/ { alias \(root.path)/; expires 60s; }
              }
            }
            """
        let configURL = directory.appendingPathComponent("nginx.conf")
        try config.write(to: configURL, atomically: true, encoding: .utf8)
        let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/opt/homebrew/bin/nginx", "/usr/local/bin/nginx"]
            .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "nginx"
        // The shell becomes nginx; the watchdog runs in its own session, so
        // it outlives whatever ends the test process, and then kills nginx.
        let script = """
            setsid sh -c 'while kill -0 \(getpid()) 2>/dev/null && kill -0 '$$' 2>/dev/null; do sleep 0.3; done; kill -9 '$$' 2>/dev/null' >/dev/null 2>&1 < /dev/null &
            exec "\(nginx)" -p "\(d)" -e "\(d)/error.log" -c "\(configURL.path)"
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 {
            if canConnect(port: port) { return true }
            if !process.isRunning { return false }
            usleep(50_000)
        }
        return false
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return result == 0
    }

    /// Puts `data` at `path` under the root (for resources a test changes).
    func publish(_ data: Data, at path: String, modified: Date? = nil) throws {
        let url = root.appendingPathComponent(path)
        try data.write(to: url)
        if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
    }
}
