import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP/1.1 origin on a loopback port whose every answer is written
/// by the test: status, headers and body bytes, with pauses, resets and
/// lies (short 206s, wrong lengths, redirects, gzip, trickles, stalls).
///
/// Each connection serves one request and is closed (`Connection: close`);
/// every request is logged (``requests``). Nothing runs unbounded: the
/// accept loop ends at ``stop()``, a connection's read times out after
/// 10 s, and ``Reply/pause(_:)`` wakes early when the origin stops or the
/// client has gone.
///
/// ```swift
/// let origin = try ScriptedOrigin { request, reply in
///     reply.head(status: 302, headers: ["Location": "http://127.0.0.1:1/elsewhere"])
/// }
/// defer { origin.stop() }
/// ```
public final class ScriptedOrigin: @unchecked Sendable {
    /// One request as the origin read it.
    public struct Request: Sendable {
        public var method: String
        /// Path and query, as sent (`/track.mp3?x=1`).
        public var target: String
        public var headers: [(name: String, value: String)]

        /// The first value of header `name` (case-insensitive).
        public func header(_ name: String) -> String? {
            headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
        }

        /// The path without its query.
        public var path: String { String(target.prefix { $0 != "?" }) }

        /// The `Range: bytes=a-b` / `bytes=a-` of the request, as a half-open range
        /// (`upperBound == Int.max` for an open end); nil without one.
        public var range: Range<Int>? {
            guard let value = header("Range"), value.hasPrefix("bytes=") else { return nil }
            let parts = value.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let first = Int(parts[0]) else { return nil }
            if parts[1].isEmpty { return first..<Int.max }
            guard let last = Int(parts[1]), last >= first else { return nil }
            return first..<(last + 1)
        }
    }

    /// The writing side of one connection.
    public final class Reply: @unchecked Sendable {
        fileprivate let descriptor: Int32
        fileprivate unowned let origin: ScriptedOrigin
        /// Body bytes written so far by ``send(_:)``.
        public private(set) var sentBytes = 0

        fileprivate init(descriptor: Int32, origin: ScriptedOrigin) {
            self.descriptor = descriptor
            self.origin = origin
        }

        /// Writes a status line and headers (a `Connection: close` is added).
        @discardableResult
        public func head(status: Int, headers: [String: String] = [:]) -> Bool {
            var text = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
            if headers.keys.contains(where: { $0.lowercased() == "connection" }) == false {
                text += "Connection: close\r\n"
            }
            text += "\r\n"
            return write(Data(text.utf8))
        }

        /// Writes body bytes; false once the client has gone.
        @discardableResult
        public func send(_ data: Data) -> Bool {
            guard write(data) else { return false }
            sentBytes += data.count
            return true
        }

        /// A whole response: the head with `Content-Length` and the body.
        public func respond(status: Int = 200, headers: [String: String] = [:], body: Data = Data()) {
            var headers = headers
            headers["Content-Length"] = headers["Content-Length"] ?? String(body.count)
            guard head(status: status, headers: headers) else { return }
            send(body)
        }

        /// Answers `request` for `content` as a well-behaved origin would:
        /// 206 with `Content-Range` for a satisfiable range, 200 without one.
        public func serve(
            _ content: Data, for request: Request, headers: [String: String] = [:], etag: String? = "\"v1\""
        ) {
            var headers = headers
            if let etag { headers["ETag"] = etag }
            headers["Accept-Ranges"] = "bytes"
            guard let range = request.range else {
                respond(status: 200, headers: headers, body: content)
                return
            }
            guard range.lowerBound < content.count else {
                respond(status: 416, headers: ["Content-Range": "bytes */\(content.count)"])
                return
            }
            let upper = min(range.upperBound, content.count)
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(upper - 1)/\(content.count)"
            respond(status: 206, headers: headers, body: content.subdata(in: range.lowerBound..<upper))
        }

        /// Waits `seconds`, or less when the origin stops or the client hangs up.
        /// Returns false when it ended early for either reason.
        @discardableResult
        public func pause(_ seconds: Double) -> Bool {
            let end = Date().addingTimeInterval(seconds)
            while Date() < end {
                if origin.isStopped || clientHasGone { return false }
                usleep(useconds_t(min(20_000, max(1, end.timeIntervalSinceNow * 1_000_000))))
            }
            return !(origin.isStopped || clientHasGone)
        }

        /// Whether ``ScriptedOrigin/stop()`` was called (a long answer should end).
        public var originStopped: Bool { origin.isStopped }

        /// Whether the client closed its side (a readable socket with nothing to read).
        public var clientHasGone: Bool {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 0) > 0 else { return false }
            if entry.revents & Int16(POLLERR | POLLHUP) != 0 { return true }
            var byte: UInt8 = 0
            return recv(descriptor, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
        }

        /// Ends the connection with a TCP reset instead of a close.
        public func reset() {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }

        private func write(_ data: Data) -> Bool {
            data.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let sent = Glibc.send(
                        descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                    if sent <= 0 { return false }
                    offset += sent
                }
                return true
            }
        }

        private static func reason(_ status: Int) -> String {
            switch status {
            case 200: "OK"
            case 206: "Partial Content"
            case 301: "Moved Permanently"
            case 302: "Found"
            case 304: "Not Modified"
            case 307: "Temporary Redirect"
            case 404: "Not Found"
            case 416: "Range Not Satisfiable"
            case 500: "Internal Server Error"
            case 503: "Service Unavailable"
            default: "Status"
            }
        }
    }

    public typealias Handler = @Sendable (Request, Reply) -> Void

    /// The port it listens on, at 127.0.0.1.
    public let port: Int
    private let listener: Int32
    private let handler: Handler
    private let state = NSLock()
    private var stopped = false
    private var log: [Request] = []
    private var open = 0

    /// Listens on 127.0.0.1 at an ephemeral port and answers every request with `handler`
    /// (called on a thread of its own per connection).
    public init(handler: @escaping Handler) throws {
        self.handler = handler
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 128) == 0 else {
            close(descriptor)
            throw CocoaError(.fileWriteUnknown)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        listener = descriptor
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port><path>`.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Every request read so far, in order of arrival.
    public var requests: [Request] { state.withLock { log } }

    /// The requests whose path is `path`.
    public func requests(to path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Connections still being answered.
    public var openConnections: Int { state.withLock { open } }

    public var isStopped: Bool { state.withLock { stopped } }

    /// Stops accepting; answers in progress see ``Reply/pause(_:)`` end early.
    public func stop() {
        let first = state.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        if first { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                break
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            state.withLock { open += 1 }
            Thread { [self] in
                defer {
                    close(client)
                    state.withLock { open -= 1 }
                }
                guard let request = Self.readRequest(client) else { return }
                state.withLock { log.append(request) }
                handler(request, Reply(descriptor: client, origin: self))
            }.start()
        }
        close(listener)
    }

    /// Reads one request head (at most 64 KiB); a body is not read.
    private static func readRequest(_ descriptor: Int32) -> Request? {
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while bytes.count < 65536 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            bytes += buffer[0..<count]
            if let range = bytes.firstRange(of: end) {
                let lines = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
                    .components(separatedBy: "\r\n")
                let parts = lines[0].split(separator: " ")
                guard parts.count >= 2 else { return nil }
                let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (
                        String(line[..<colon]),
                        line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    )
                }
                return Request(method: String(parts[0]), target: String(parts[1]), headers: headers)
            }
        }
        return nil
    }
}
