import Foundation
import HLSPlaylist
import MediaStore
import MediaStreaming
import MediaSupport

/// What a ``Connection`` is given when it is made: the responder that
/// decides every answer, where it counts and reports, and its bounds.
struct ConnectionContext: Sendable {
    var responder: Responder
    var activity: ServerActivity
    /// Request line, head and header-count bounds.
    var limits: HTTPLimits
    /// ``MediaServerConfiguration/requestTimeout``.
    var requestTimeout: Duration
    /// ``MediaServerConfiguration/idleTimeout``.
    var idleTimeout: Duration
    /// ``MediaServerConfiguration/sendTimeout``.
    var sendTimeout: Duration
    /// ``MediaServerConfiguration/originWaitTimeout``.
    var originWaitTimeout: Duration
    /// ``MediaServerConfiguration/connectionHooks``.
    var hooks = ConnectionHooks()
}

/// One client connection, served on a thread of its own: reads request
/// heads (keep-alive and pipelined), asks the ``Responder`` for each
/// answer in order, and writes it — a head, then bytes in hand or the
/// pieces of a ``BodyStream`` at the socket's pace (back-pressure). Every
/// wait has a deadline: a wait on the origin lasts at most
/// ``MediaServerConfiguration/originWaitTimeout`` and watches the client,
/// who may hang up meanwhile. It knows nothing of the server that made it.
final class Connection: @unchecked Sendable {
    private let socket: Socket
    private let context: ConnectionContext
    /// What to stop when the server stops (a wait on the origin, a body stream).
    private let activity = Locked<(aborted: Bool, stop: (@Sendable () -> Void)?)>((false, nil))

    init(descriptor: Int32, context: ConnectionContext) {
        self.socket = Socket(descriptor: descriptor)
        self.context = context
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

    /// Writes `response` without reading a request, and closes (the
    /// connection limit). It runs on the accepting thread, so it never
    /// waits: what the socket does not take at once is dropped.
    func refuseAtOnce(_ response: Response) {
        var head = response.head
        head.add("Connection", "close")
        if case .message(let text) = response.body {
            _ = socket.write(Data(head.serialized()) + text, timeout: .zero)
        }
        socket.close()
    }

    /// Closes the socket: the client sees the connection end. Call it after
    /// ``run()`` once the connection's slot is free, so a client that saw
    /// the end and connects again finds the slot free.
    func close() {
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

    /// Serves requests until the client leaves, a response closes the connection, or it is aborted.
    /// The socket stays open until ``close()``.
    ///
    /// - parameter handOff: run once on this thread before the connection
    ///   first waits (on its client or the origin) or answers, at its end at
    ///   the latest: until then the thread only reads what has arrived and
    ///   parses it (bounded by ``HTTPLimits``). The server hands accepting
    ///   over there, so the thread that accepted the connection serves it.
    func run(handingOff handOff: (@Sendable () -> Void)? = nil) {
        socket.beforeFirstWait = handOff
        defer { socket.runBeforeFirstWait() }
        var buffer: [UInt8] = []
        while !isAborted {
            guard let request = readRequest(&buffer) else { return }
            context.activity.count { $0.requests += 1 }
            guard answer(request), request.keepsAlive else { return }
        }
    }

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
        let deadline = Date() + context.originWaitTimeout.inSeconds
        while true {
            switch step(min(deadline, Date() + Self.clientCheckInterval)) {
            case .done(let value):
                return .value(value)
            case .stopped:
                return .clientGone
            case .pending:
                if isAborted { return .clientGone }
                if socket.peerHasClosed {
                    context.activity.count { $0.clientsGoneWhileWaiting += 1 }
                    return .clientGone
                }
                if Date() >= deadline {
                    context.activity.count { $0.originWaitsTimedOut += 1 }
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
                if let (request, consumed) = try HTTPRequestParser.parse(buffer, limits: context.limits) {
                    buffer.removeFirst(consumed)
                    return request
                }
            } catch {
                context.activity.count { $0.requests += 1 }
                _ = send(.refusal(error.status, error.description, method: "GET"), closing: true, method: "GET")
                return nil
            }
            let deadline = requestStart.map { $0 + context.requestTimeout } ?? .now + context.idleTimeout
            switch socket.read(into: &buffer, until: deadline) {
            case .data:
                if requestStart == nil { requestStart = .now }
            case .timedOut:
                // Idle between requests: close quietly. Mid-head: the slowloris guard.
                if requestStart != nil {
                    context.activity.count { $0.requests += 1 }
                    _ = send(
                        .refusal(408, "the request head did not arrive in time", method: "GET"), closing: true,
                        method: "GET")
                }
                return nil
            case .closed, .failed:
                return nil
            }
        }
    }

    /// Answers one request; `false` when the connection must close.
    private func answer(_ request: HTTPRequest) -> Bool {
        socket.runBeforeFirstWait()
        context.hooks.willAnswer?()
        let closing = !request.keepsAlive
        switch context.responder.respond(to: request) {
        case .now(let response):
            return send(response, closing: closing, method: request.method)
        case .later(let pending):
            let outcome = whileRunning(stoppable: { pending.abandon() }) { watch { pending.wait(until: $0) } }
            switch outcome {
            case .value(let response):
                return send(response, closing: closing, method: request.method)
            case .timedOut:
                pending.abandon()
                return send(pending.timeout, closing: closing, method: request.method)
            case .clientGone:
                pending.abandon()
                return false
            }
        }
    }

    /// Writes `response` (adding `Connection: close` when the connection
    /// ends after it), counts and reports it. A streamed body's head goes
    /// out only once its first bytes are in hand; when they cannot come,
    /// the responder's error status instead (a player then sees why, not a
    /// body cut short after a 2xx head). Returns whether the connection may
    /// serve another request.
    private func send(_ response: Response, closing requested: Bool, method: String) -> Bool {
        socket.runBeforeFirstWait()
        let closing = requested || response.closesConnection
        var head = response.head
        if closing { head.add("Connection", "close") }
        let status = head.status
        switch response.body {
        case .message(let text):
            context.activity.countAnswer(status: status)
            if case .refused(let reason) = response.report {
                context.activity.emit(.refused(status: status, reason: reason))
            }
            let sent = socket.write(Data(head.serialized()) + text, timeout: context.sendTimeout)
            report(response.report, status: status, bytes: 0, complete: sent)
            return sent && !response.closesConnection && !isAborted
        case .bytes(let body):
            context.activity.countAnswer(status: status)
            let sent = socket.write(Data(head.serialized()) + body, timeout: context.sendTimeout)
            if sent { context.activity.count { $0.bodyBytesSent += body.count } }
            report(response.report, status: status, bytes: sent ? body.count : 0, complete: sent)
            if !sent { context.activity.count { $0.responsesCut += 1 } }
            return sent && !response.closesConnection
        case .stream(let stream, let length):
            return whileRunning(stoppable: { stream.cancel() }) {
                sendStreamed(stream, length: length, head: head, response: response, closing: closing, method: method)
            }
        }
    }

    /// Tells observers a media or HLS answer went out.
    private func report(_ report: Response.Report, status: Int, bytes: Int, complete: Bool) {
        if case .served(let origin) = report {
            context.activity.emit(.served(origin: origin, status: status, bytes: bytes, complete: complete))
        }
    }

    private func sendStreamed(
        _ stream: any BodyStream, length: Int, head: ResponseHead, response: Response, closing: Bool, method: String
    ) -> Bool {
        stream.start()
        let first: [Data]
        let missing: Responder.FirstBytesFailure
        switch watch({ Self.step(stream.next(until: $0)) }) {
        case .value(.data(let pieces)):
            first = pieces
            missing = .ended
        case .value(.failed(let error)):
            first = []
            missing = .failed(error)
        case .value(.end), .value(.pending):
            first = []
            missing = .ended
        case .timedOut:
            first = []
            missing = .timedOut
        case .clientGone:
            stream.cancel()
            return false
        }
        guard !first.isEmpty else {
            stream.cancel()
            _ = send(Responder.firstBytesMissing(missing, method: method), closing: closing, method: method)
            return !isAborted && !response.closesConnection
        }
        context.activity.countAnswer(status: head.status)
        // A small first piece goes out with the head, in one write.
        let joined = first.count == 1 && first[0].count <= Self.joinedFirstPieceBytes
        var opening = head.serialized()
        if joined { opening.append(contentsOf: first[0]) }
        guard socket.write(opening, timeout: context.sendTimeout) else {
            stream.cancel()
            return false
        }
        if joined { context.activity.count { $0.bodyBytesSent += first[0].count } }
        let (sent, complete) = pump(
            stream, length: length, first: joined ? [] : first, sent: joined ? first[0].count : 0)
        report(response.report, status: head.status, bytes: sent, complete: complete)
        if !complete { context.activity.count { $0.responsesCut += 1 } }
        return complete && !response.closesConnection
    }

    /// The largest first piece written together with the head.
    private static let joinedFirstPieceBytes = 64 * 1024

    /// A stream's answer as a wait step: ``BodyStep/pending`` is "nothing yet".
    private static func step(_ next: BodyStep) -> WaitStep<BodyStep> {
        if case .pending = next { return .pending }
        return .done(next)
    }

    /// Writes `first`, then the rest of the body as it arrives (after
    /// `alreadySent` bytes went out with the head); returns the bytes sent and whether all `length` were (if not, the connection must
    /// close: the client sees a body shorter than its `Content-Length`, never
    /// a complete-looking one). Each wait for the origin has the origin wait timeout.
    private func pump(_ stream: any BodyStream, length: Int, first: [Data], sent alreadySent: Int) -> (Int, Bool) {
        var sent = alreadySent
        var pieces = first
        while true {
            for piece in pieces {
                guard socket.write(piece, timeout: context.sendTimeout) else {
                    stream.cancel()
                    return (sent, false)
                }
                sent += piece.count
                context.activity.count { $0.bodyBytesSent += piece.count }
            }
            switch watch({ Self.step(stream.next(until: $0)) }) {
            case .value(.data(let more)):
                pieces = more
            case .value(.end):
                return (sent, sent == length)
            case .value(.failed), .value(.pending), .timedOut, .clientGone:
                stream.cancel()
                return (sent, false)
            }
        }
    }
}
