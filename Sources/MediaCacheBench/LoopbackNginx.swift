import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// nginx on a free loopback port serving one directory (the playback
/// bench's origin), stopped by ``stop()`` or, at the latest, when the
/// bench process exits.
final class LoopbackNginx {
    let port: Int
    private let process: Process

    init(serving root: URL, in directory: URL) throws {
        let candidates = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/opt/homebrew/bin/nginx", "/usr/local/bin/nginx"]
        guard let nginx = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BenchUsageError(message: "nginx not found (Debian: nginx-light)")
        }
        let d = directory.path
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        for _ in 0..<5 {
            let port = Self.freePort()
            let config = """
                daemon off; master_process off; worker_processes 1;
                pid \(d)/nginx.pid; error_log \(d)/error.log;
                events { worker_connections 64; }
                http {
                  access_log off;
                  client_body_temp_path \(d)/tmp; proxy_temp_path \(d)/tmp; fastcgi_temp_path \(d)/tmp;
                  uwsgi_temp_path \(d)/tmp; scgi_temp_path \(d)/tmp;
                  types { audio/mpeg mp3; }
                  default_type application/octet-stream;
                  server { listen 127.0.0.1:\(port); root \(root.path); }
                }
                """
            try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = [
                "-c",
                """
                "\(nginx)" -p "\(d)" -e "\(d)/error.log" -c "\(d)/nginx.conf" & n=$!
                trap 'kill -9 $n 2>/dev/null; exit 0' TERM
                while kill -0 \(getpid()) 2>/dev/null && kill -0 $n 2>/dev/null; do sleep 0.2; done
                kill -9 $n 2>/dev/null
                """,
            ]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            for _ in 0..<100 where process.isRunning {
                if Self.canConnect(port: port) {
                    self.port = port
                    self.process = process
                    return
                }
                usleep(30_000)
            }
            process.terminate()
        }
        throw BenchUsageError(message: "nginx did not start: \((try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? "")")
    }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
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
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
