import Foundation
import HLSPlaylist
import MediaStore
import MediaStreaming
import MediaSupport

/// One client connection, served on a thread of its own: reads request
/// heads (keep-alive and pipelined), answers each in order, and writes
/// media bodies as the loader gives them, with the socket's pace as
/// back-pressure.
final class Connection: @unchecked Sendable {
    private let socket: Socket
    private let server: MediaServer
    private let configuration: MediaServerConfiguration
    /// What to stop when the server stops (a wait for content information, a body pump).
    private let activity = Locked<(aborted: Bool, stop: (@Sendable () -> Void)?)>((false, nil))

    init(descriptor: Int32, server: MediaServer) {
        self.socket = Socket(descriptor: descriptor)
        self.server = server
        self.configuration = server.configuration
    }

    /// Ends the connection from another thread: wakes its reads and writes
    /// and stops what it waits for.
    func abort() {
        let stop = activity.withLock { state -> (@Sendable () -> Void)? in
            state.aborted = true
            return state.stop
        }
        socket.shutdown()
        stop?()
    }

    /// Answers `status` without reading the request, and closes (the connection limit).
    func refuseAtOnce(_ status: Int, _ reason: String, extra: [(String, String)]) {
        _ = socket.write(
            ResponseHead.text(status: status, reason, closing: true, extra: extra), timeout: .milliseconds(100))
        socket.close()
    }

    private var isAborted: Bool { activity.current.aborted }

    /// Runs `stop` if the connection is aborted while `body` runs.
    private func whileRunning<T>(stoppable stop: @escaping @Sendable () -> Void, _ body: () -> T) -> T {
        let aborted = activity.withLock { state -> Bool in
            state.stop = stop
            return state.aborted
        }
        if aborted { stop() }
        defer { activity.withLock { $0.stop = nil } }
        return body()
    }

    func run() {
        defer {
            socket.close()
            server.connectionEnded(self)
        }
        var buffer: [UInt8] = []
        while !isAborted {
            guard let request = readRequest(&buffer) else { return }
            server.count { $0.requests += 1 }
            guard answer(request), request.keepsAlive else { return }
        }
    }

    private var sendTimeout: Duration { .milliseconds(Int(configuration.sendTimeout * 1000)) }

    /// How often a wait on the origin looks whether the client hung up.
    private static let clientCheckInterval: TimeInterval = 0.05

    /// What a wait on the origin ended with.
    private enum Watched<Value> {
        case value(Value)
        /// ``MediaServerConfiguration/originWaitTimeout`` passed.
        case timedOut
        /// The client closed its side, or the connection was aborted.
        case clientGone
    }

    /// Waits for `step` (which waits until the instant it is given) to give a
    /// value, for at most ``MediaServerConfiguration/originWaitTimeout``,
    /// looking every few milliseconds whether the client is still there.
    private func watch<Value>(_ step: (Date) -> WaitStep<Value>) -> Watched<Value> {
        let deadline = Date() + configuration.originWaitTimeout
        while true {
            switch step(min(deadline, Date() + Self.clientCheckInterval)) {
            case .done(let value):
                return .value(value)
            case .stopped:
                return .clientGone
            case .pending:
                if isAborted { return .clientGone }
                if socket.peerHasClosed {
                    server.count { $0.clientsGoneWhileWaiting += 1 }
                    return .clientGone
                }
                if Date() >= deadline {
                    server.count { $0.originWaitsTimedOut += 1 }
                    return .timedOut
                }
            }
        }
    }

    /// The next request head, reading as needed; `nil` when the connection should end
    /// (closed, idle, or refused with a status already sent).
    private func readRequest(_ buffer: inout [UInt8]) -> HTTPRequest? {
        var requestStart: ContinuousClock.Instant? = buffer.isEmpty ? nil : .now
        while true {
            do {
                if let (request, consumed) = try HTTPRequestParser.parse(buffer, limits: configuration.limits) {
                    buffer.removeFirst(consumed)
                    return request
                }
            } catch {
                server.count { $0.requests += 1 }
                refuse(error.status, error.description, closing: true)
                return nil
            }
            let deadline =
                requestStart.map { $0 + .milliseconds(Int(configuration.requestTimeout * 1000)) }
                ?? .now + .milliseconds(Int(configuration.idleTimeout * 1000))
            switch socket.read(into: &buffer, until: deadline) {
            case .data:
                if requestStart == nil { requestStart = .now }
            case .timedOut:
                // Idle between requests: close quietly. Mid-head: the slowloris guard.
                if requestStart != nil {
                    server.count { $0.requests += 1 }
                    refuse(408, "the request head did not arrive in time", closing: true)
                }
                return nil
            case .closed, .failed:
                return nil
            }
        }
    }

    private func refuse(
        _ status: Int, _ reason: String, closing: Bool, method: String = "GET", extra: [(String, String)] = []
    ) {
        server.count {
            if status >= 500 { $0.serverErrors += 1 } else { $0.clientErrors += 1 }
        }
        server.emit(.refused(status: status, reason: reason))
        _ = socket.write(
            ResponseHead.text(status: status, reason, closing: closing, method: method, extra: extra),
            timeout: sendTimeout)
    }

    /// Answers one request; `false` when the connection must close.
    private func answer(_ request: HTTPRequest) -> Bool {
        let closing = !request.keepsAlive
        guard request.method == "GET" || request.method == "HEAD" else {
            refuse(405, "only GET and HEAD", closing: closing, extra: [("Allow", "GET, HEAD")])
            return true
        }
        switch server.hostCheck.check(request) {
        case .accepted:
            break
        case .misdirected(let reason):
            refuse(421, reason, closing: true, method: request.method)
            return false
        case .malformed(let reason):
            refuse(400, reason, closing: true, method: request.method)
            return false
        }
        switch ServerRoute.resolve(request.target, secret: server.secret) {
        case .ping:
            server.count { $0.successes += 1 }
            return socket.write(
                ResponseHead.text(status: 200, "ok", closing: closing, method: request.method), timeout: sendTimeout)
        case .badTarget:
            refuse(400, "the target must be a path", closing: true)
            return false
        case .forbidden:
            refuse(403, "forbidden", closing: closing, method: request.method)
            return true
        case .notFound:
            refuse(404, "not a local URL of this server", closing: closing, method: request.method)
            return true
        case .media(let origin):
            guard server.isAllowed(origin) else {
                refuse(403, server.refusal(of: origin), closing: closing, method: request.method)
                return true
            }
            return serveMedia(request, origin: origin)
        case .hls(let route):
            guard server.isAllowed(route.origin) else {
                refuse(403, server.refusal(of: route.origin), closing: closing, method: request.method)
                return true
            }
            return serveHLS(request, route: route)
        }
    }

    private func serveMedia(_ request: HTTPRequest, origin: URL) -> Bool {
        let closing = !request.keepsAlive
        let loader = server.loaders.loader(for: origin)
        // When the bytes wanted are known before the length (no Range, `a-b`
        // or `a-`, no conditionals), one loading request asks for the content
        // information and those bytes at once; otherwise the information first.
        var pump: BodyPump?
        let outcome: Watched<Result<ContentInformation, StreamingError>>
        if let guess = Self.likelyBody(request) {
            let speculative = BodyPump(
                loader: loader, range: guess, highWater: configuration.responseBufferBytes, withInformation: true)
            pump = speculative
            outcome = whileRunning(stoppable: { speculative.cancel() }) {
                speculative.start()
                return watch { speculative.waitForInformation(until: $0) }
            }
        } else {
            let wait = BlockingWait { () async throws(StreamingError) -> ContentInformation in
                try await loader.contentInformation()
            }
            outcome = whileRunning(stoppable: { wait.abandon() }) { watch { wait.wait(until: $0) } }
            if case .value = outcome {} else { wait.abandon() }
        }
        let information: ContentInformation
        switch outcome {
        case .value(.success(let info)):
            information = info
        case .value(.failure(let error)):
            pump?.cancel()
            let (status, reason) = Self.status(for: error)
            refuse(status, reason, closing: closing, method: request.method)
            return !isAborted
        case .timedOut:
            pump?.cancel()
            refuse(504, "the origin gave no content information in time", closing: closing, method: request.method)
            return !isAborted
        case .clientGone:
            pump?.cancel()
            return false
        }
        let representation = Representation(
            length: information.contentLength, mimeType: information.mimeType, etag: information.etag,
            lastModified: information.lastModified)
        let plan = ResponsePlanner.plan(method: request.method, request: request, representation: representation)
        if let speculative = pump, plan.body != speculative.body || plan.body?.isEmpty != false {
            speculative.cancel()
            pump = nil
        }
        var head = plan.head
        if closing { head.add("Connection", "close") }
        let status = head.status
        guard let range = plan.body, !range.isEmpty else {
            server.count { if status >= 400 { $0.clientErrors += 1 } else { $0.successes += 1 } }
            guard
                socket.write(head.serialized() + (request.method == "HEAD" ? [] : plan.message), timeout: sendTimeout)
            else { return false }
            server.emit(.served(origin: origin, status: status, bytes: 0, complete: true))
            return true
        }
        let body = pump ?? BodyPump(loader: loader, range: range, highWater: configuration.responseBufferBytes)
        return whileRunning(stoppable: { body.cancel() }) {
            sendBody(body, range: range, head: head, origin: origin, method: request.method, closing: closing)
        }
    }

    /// Sends `head` once the first bytes of `range` are in hand, then the
    /// rest as it comes; when the first bytes cannot come, an error status
    /// instead (a player then sees why, not a body cut short after a 2xx head).
    /// Returns whether the connection may serve another request.
    private func sendBody(
        _ pump: BodyPump, range: Range<Int>, head: ResponseHead, origin: URL, method: String, closing: Bool
    ) -> Bool {
        pump.start()
        let first: [Data]
        switch watch({ step(pump.next(until: $0)) }) {
        case .value(.data(let pieces)):
            first = pieces
        case .value(.failed(let error)):
            pump.cancel()
            let (status, reason) = Self.status(for: error)
            refuse(status, reason, closing: closing, method: method)
            return !isAborted
        case .value(.end), .value(.pending):
            pump.cancel()
            refuse(502, "the origin ended the body before its first byte", closing: closing, method: method)
            return !isAborted
        case .timedOut:
            pump.cancel()
            refuse(504, "the origin sent no byte of the body in time", closing: closing, method: method)
            return !isAborted
        case .clientGone:
            pump.cancel()
            return false
        }
        let status = head.status
        server.count { if status >= 400 { $0.clientErrors += 1 } else { $0.successes += 1 } }
        guard socket.write(head.serialized(), timeout: sendTimeout) else {
            pump.cancel()
            return false
        }
        let (sent, complete) = pumpBody(pump, range: range, first: first)
        server.emit(.served(origin: origin, status: status, bytes: sent, complete: complete))
        if !complete { server.count { $0.responsesCut += 1 } }
        return complete
    }

    /// A pump's answer as a wait step: ``BodyPump/Next/pending`` is "nothing yet".
    private func step(_ next: BodyPump.Next) -> WaitStep<BodyPump.Next> {
        if case .pending = next { return .pending }
        return .done(next)
    }

    /// Answers an HLS resource: a playlist is read (or fetched) whole and
    /// rewritten; anything else is fetched into the store first, then sent
    /// from its entry in pieces of at most
    /// ``MediaServerConfiguration/responseBufferBytes`` (what one request
    /// holds), planned like any representation.
    private func serveHLS(_ request: HTTPRequest, route: HLSRoute) -> Bool {
        let closing = !request.keepsAlive
        let server = self.server
        let wait = BlockingWait {
            () async throws(HLSDownloadError) -> (body: HLSResourceBody, key: HLSResourceKey, mimeType: String) in
            try await server.hlsResponse(for: route)
        }
        let response: (body: HLSResourceBody, key: HLSResourceKey, mimeType: String)
        let outcome = whileRunning(stoppable: { wait.abandon() }) { watch { wait.wait(until: $0) } }
        if case .value = outcome {} else { wait.abandon() }
        switch outcome {
        case .value(.success(let answer)):
            response = answer
        case .value(.failure(let error)):
            let (status, reason): (Int, String)
            switch error {
            case .streaming(let streaming): (status, reason) = Self.status(for: streaming)
            case .resourceTooLarge(_, _, let limit):
                (status, reason) = (502, "resource too large (over \(limit) bytes)")
            default: (status, reason) = (502, "\(String(describing: error).prefix(160))")
            }
            refuse(status, reason, closing: closing, method: request.method)
            return !isAborted
        case .timedOut:
            refuse(504, "the origin sent no HLS resource in time", closing: closing, method: request.method)
            return !isAborted
        case .clientGone:
            return false
        }
        let length: Int
        switch response.body {
        case .bytes(let data): length = data.count
        case .stored(let info): length = info.length ?? info.cachedBytes
        }
        let plan = ResponsePlanner.plan(
            method: request.method, request: request,
            representation: Representation(length: length, mimeType: response.mimeType))
        var head = plan.head
        if closing { head.add("Connection", "close") }
        let status = head.status
        server.count { if status >= 400 { $0.clientErrors += 1 } else { $0.successes += 1 } }
        var bytes = head.serialized() + (request.method == "HEAD" ? [] : plan.message)
        guard let range = plan.body, request.method != "HEAD", !range.isEmpty else {
            let sent = socket.write(bytes, timeout: sendTimeout)
            server.emit(.served(origin: route.origin, status: status, bytes: 0, complete: sent))
            return sent
        }
        var sent = 0
        var complete = false
        switch response.body {
        case .bytes(let body):
            bytes += body[body.startIndex + range.lowerBound..<body.startIndex + range.upperBound]
            if socket.write(bytes, timeout: sendTimeout) {
                sent = range.count
                complete = true
            }
        case .stored(let info):
            (sent, complete) = sendStored(response.key, version: info.version, range: range, head: bytes)
        }
        server.count { $0.bodyBytesSent += sent }
        if !complete { server.count { $0.responsesCut += 1 } }
        server.emit(.served(origin: route.origin, status: status, bytes: sent, complete: complete))
        return complete
    }

    /// Writes `head`, then `range` of version `version` of `key`'s entry,
    /// read a piece at a time; returns the body bytes sent and whether all
    /// were (if not, the connection must close).
    private func sendStored(_ key: HLSResourceKey, version: UInt64, range: Range<Int>, head: [UInt8]) -> (Int, Bool) {
        guard socket.write(head, timeout: sendTimeout) else { return (0, false) }
        let resources = server.hlsResources
        let piece = configuration.responseBufferBytes
        var offset = range.lowerBound
        while offset < range.upperBound {
            let wanted = offset..<min(range.upperBound, offset + piece)
            let read = BlockingWait { () async throws(StreamingError) -> Data in
                try await resources.read(key, range: wanted, version: version)
            }
            let outcome = whileRunning(stoppable: { read.abandon() }) { watch { read.wait(until: $0) } }
            if case .value = outcome {} else { read.abandon() }
            guard case .value(.success(let data)) = outcome, data.count == wanted.count,
                socket.write(data, timeout: sendTimeout)
            else { return (offset - range.lowerBound, false) }
            offset = wanted.upperBound
        }
        return (range.count, true)
    }

    /// The body a `GET` most likely gets, when it is known without the
    /// length: everything (no `Range`), or one `a-b` or `a-` range. `nil`
    /// for `HEAD`, suffix or several ranges, a first byte past every end,
    /// and conditional requests.
    static func likelyBody(_ request: HTTPRequest) -> Range<Int>? {
        guard request.method == "GET",
            ["If-None-Match", "If-Match", "If-Modified-Since"].allSatisfy({ request.header($0) == nil })
        else { return nil }
        guard let header = request.header("Range") else { return 0..<Int.max }
        guard let set = ByteRangeSet.parse(header) else { return 0..<Int.max }
        return set.bytesKnownBeforeLength
    }

    /// Writes `first`, then the rest of `range` as it arrives; returns the
    /// bytes sent and whether all were (if not, the connection must close:
    /// the client sees a body shorter than its `Content-Length`, never a
    /// complete-looking one). Each wait for the origin has the origin wait timeout.
    private func pumpBody(_ pump: BodyPump, range: Range<Int>, first: [Data]) -> (Int, Bool) {
        var sent = 0
        var pieces = first
        while true {
            for piece in pieces {
                guard socket.write(piece, timeout: sendTimeout) else {
                    pump.cancel()
                    return (sent, false)
                }
                sent += piece.count
                server.count { $0.bodyBytesSent += piece.count }
            }
            switch watch({ step(pump.next(until: $0)) }) {
            case .value(.data(let more)):
                pieces = more
            case .value(.end):
                return (sent, sent == range.count)
            case .value(.failed), .value(.pending), .timedOut, .clientGone:
                pump.cancel()
                return (sent, false)
            }
        }
    }

    /// The status a loader failure is answered with, before any body byte.
    static func status(for error: StreamingError) -> (Int, String) {
        switch error {
        case .origin(let origin):
            switch origin {
            case .httpStatus(let code, _) where code >= 400 && code < 500 && code != 416:
                return (code, "the origin answered \(code)")
            case .httpStatus(let code, _):
                return (502, "the origin answered \(code)")
            case .stalled:
                return (504, "the origin sent nothing in time")
            case .cancelled:
                return (503, "cancelled")
            default:
                return (502, "origin failure: \(String(describing: origin).prefix(160))")
            }
        case .store:
            return (500, "store failure")
        case .resourceChanged:
            return (502, "the resource changed at the origin while being read")
        case .outOfRange:
            return (416, "out of range")
        case .notCacheable(let reason):
            return (502, "not cacheable: \(reason.prefix(160))")
        case .cancelled:
            return (503, "cancelled")
        }
    }
}
