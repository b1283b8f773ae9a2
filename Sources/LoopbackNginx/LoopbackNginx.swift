import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway nginx on a free loopback port, serving one directory with
/// nginx's own `Range`, `ETag` and `Last-Modified` handling (the origin of
/// the demo, the playback bench and the `MediaStreaming` tests).
///
/// nginx runs in the foreground with one worker and a temporary config
/// (`nginx.conf`, `error.log`, optionally `access.log` and a `tmp/`
/// directory) in the given working directory. A watchdog shell in its own
/// session kills it with `SIGKILL` once the process that started it is
/// gone, however that process ends (even on `SIGKILL` or a process-group
/// kill), so nginx never outlives its starter by more than 0.3 s.
/// ``stop()`` kills it with `SIGKILL` straight away.
///
/// nginx and the watchdog are ``ChildProcess``es, not Foundation
/// `Process`es: they inherit no descriptor of this process, so a pipe or
/// socket pair another thread opened as they started (another `Process`'s)
/// never stays open for as long as nginx runs.
///
/// The signal disposition of the process is left alone: a client that
/// writes to connections nginx may close first should ignore `SIGPIPE`
/// itself.
public final class LoopbackNginx: Sendable {
    /// A reason nginx could not be started.
    public struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with nginx's error log when it has one.
        public let description: String
    }

    /// The loopback port nginx listens on (on 127.0.0.1).
    public let port: Int
    /// The directory served at `/`.
    public let root: URL
    /// The working directory holding the config and the logs.
    public let directory: URL

    /// nginx itself.
    private let process: ChildProcess
    /// The shell that kills nginx when this process is gone.
    private let watchdog: ChildProcess

    /// Where nginx is looked for, before the directories of `PATH`.
    public static let candidatePaths = [
        "/usr/sbin/nginx", "/usr/local/sbin/nginx", "/opt/homebrew/bin/nginx", "/usr/local/bin/nginx",
    ]

    /// The nginx executable: the first of ``candidatePaths``, then of
    /// `PATH`, that is executable; `nil` when there is none.
    public static func findExecutable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let fromPath = path.split(separator: ":").map { "\($0)/nginx" }
        return (candidatePaths + fromPath).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts nginx serving `root`, with its config and logs in `directory`
    /// (created when missing), and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - root: The directory served at `/`.
    ///   - directory: The working directory for the config, the logs and
    ///     nginx's temporary files; the caller removes it.
    ///   - accessLog: Whether requests are logged to `access.log` (read
    ///     back with ``loggedRequests()``); off keeps a benchmark's origin
    ///     from writing a line per request.
    ///   - httpDirectives: Extra lines for the `http` block, such as
    ///     `keepalive_requests 100000;`.
    ///   - serverDirectives: Extra lines for the `server` block, such as
    ///     a `location` with its own headers.
    /// - Throws: ``Failure`` when nginx is not installed or does not
    ///   start (after five attempts on different ports).
    public init(
        serving root: URL, in directory: URL, accessLog: Bool = true,
        httpDirectives: String = "", serverDirectives: String = ""
    ) throws {
        guard let nginx = Self.findExecutable() else {
            throw Failure(description: "nginx not found (Debian: nginx-light; see Tools/bootstrap)")
        }
        self.root = root
        self.directory = directory
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("tmp"), withIntermediateDirectories: true)
        let d = directory.path
        let configURL = directory.appendingPathComponent("nginx.conf")
        for _ in 0..<5 {
            let port = Self.freePort()
            let config = """
                daemon off;
                master_process off;
                worker_processes 1;
                pid \(d)/nginx.pid;
                error_log \(d)/error.log;
                events { worker_connections 256; }
                http {
                  access_log \(accessLog ? "\(d)/access.log" : "off");
                  client_body_temp_path \(d)/tmp;
                  proxy_temp_path \(d)/tmp;
                  fastcgi_temp_path \(d)/tmp;
                  uwsgi_temp_path \(d)/tmp;
                  scgi_temp_path \(d)/tmp;
                  types {
                    audio/mpeg mp3; audio/mp4 m4a; audio/aac aac; audio/flac flac;
                    audio/ogg ogg opus; audio/wav wav;
                  }
                  default_type application/octet-stream;
                \(httpDirectives)
                  server {
                    listen 127.0.0.1:\(port);
                    root \(root.path);
                \(serverDirectives)
                  }
                }
                """
            try config.write(to: configURL, atomically: true, encoding: .utf8)
            let process: ChildProcess
            let watchdog: ChildProcess
            do {
                process = try ChildProcess(nginx, ["-p", d, "-e", "\(d)/error.log", "-c", configURL.path])
            } catch {
                throw Failure(description: error.description)
            }
            do {
                watchdog = try Self.startWatchdog(for: process.processIdentifier)
            } catch {
                Self.kill(process)
                throw Failure(description: error.description)
            }
            for _ in 0..<100 where process.isRunning {
                if Self.canConnect(port: port) {
                    self.port = port
                    self.process = process
                    self.watchdog = watchdog
                    return
                }
                usleep(50_000)
            }
            Self.kill(process)
            watchdog.waitUntilExit()
        }
        let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
        throw Failure(description: "nginx did not start: \(log)")
    }

    /// The server's address, `http://127.0.0.1:port`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The URL of `path` (relative to the served root) on this server.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// The lines of nginx's access log, one per request it answered so far
    /// (the origin's own count); empty when the access log is off.
    public func loggedRequests() -> [String] {
        let log = (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? ""
        return log.split(separator: "\n").map(String.init)
    }

    /// Kills nginx with `SIGKILL` and waits for it and for its watchdog
    /// (which notices within 0.3 s). Safe to call more than once.
    public func stop() {
        Self.kill(process)
        watchdog.waitUntilExit()
    }

    private static func kill(_ process: ChildProcess) {
        process.kill(SIGKILL)
        process.waitUntilExit()
    }

    /// Starts the shell that kills nginx (`pid`) with `SIGKILL` once this
    /// process is gone; it ends by itself when nginx does (nginx is reaped
    /// by ``stop()`` at once, so `kill -0` stops finding it).
    ///
    /// It runs in its own session (through `setsid` where there is one;
    /// it has its own process group anyway), so nothing sent to this
    /// process's group or session reaches it. Like nginx, it is a
    /// ``ChildProcess``: it inherits no descriptor of this process, so it
    /// never keeps alive a pipe or socket another thread is waiting on.
    private static func startWatchdog(for pid: Int32) throws(ChildProcess.Failure) -> ChildProcess {
        let loop = """
            while kill -0 \(getpid()) 2>/dev/null && kill -0 \(pid) 2>/dev/null; do sleep 0.3; done
            kill -9 \(pid) 2>/dev/null
            """
        if let setsid = ["/usr/bin/setsid", "/bin/setsid"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) {
            return try ChildProcess(setsid, ["/bin/sh", "-c", loop])
        }
        return try ChildProcess("/bin/sh", ["-c", loop])
    }

    /// A port the kernel had free on 127.0.0.1 a moment ago.
    private static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}
