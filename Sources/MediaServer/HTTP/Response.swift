import Foundation
import MediaStreaming
import MediaSupport

/// A response the ``Responder`` decided and the connection writes: the
/// head, the body, and what the server reports of it. The connection adds
/// only `Connection: close` and moves the bytes.
struct Response: Sendable {
    /// What the server tells its observers once the response is written.
    enum Report: Sendable, Equatable {
        /// Nothing (`/ping`).
        case quiet
        /// A refusal before any media byte (``MediaServerEvent/refused(status:reason:)``).
        case refused(reason: String)
        /// A media or HLS answer (``MediaServerEvent/served(origin:status:bytes:complete:)``).
        case served(origin: URL)
    }

    /// What follows the head.
    enum Body: Sendable {
        /// A short text that is not the resource's bytes (a refusal, the
        /// text of a `416`); empty for none (`HEAD`, `304`).
        case message(Data)
        /// The resource's bytes, in hand (a rewritten playlist).
        case bytes(Data)
        /// `length` bytes pulled from `stream`; the head goes out only once its first bytes are in hand.
        case stream(any BodyStream, length: Int)
    }

    var head: ResponseHead
    var body: Body
    var report: Report
    /// Whether the connection ends after it, whatever the request asked
    /// (a bad target, a misdirected or malformed `Host`).
    var closesConnection = false

    /// The status of the head.
    var status: Int { head.status }

    /// A complete plain-text answer (errors, `/ping`), without a body for `HEAD`.
    static func text(
        status: Int, _ text: String, method: String, report: Report, extra: [(String, String)] = [],
        closesConnection: Bool = false
    ) -> Response {
        let payload = Data((text + "\n").utf8)
        var head = ResponseHead(status: status)
        head.add("Content-Type", "text/plain; charset=utf-8")
        head.add("Content-Length", String(payload.count))
        head.add("Cache-Control", "no-store")
        for (name, value) in extra { head.add(name, value) }
        return Response(
            head: head, body: .message(method == "HEAD" ? Data() : payload), report: report,
            closesConnection: closesConnection)
    }

    /// A refusal: `status` with `reason` as its text, reported as ``Report/refused(reason:)``.
    static func refusal(
        _ status: Int, _ reason: String, method: String, extra: [(String, String)] = [], closesConnection: Bool = false
    ) -> Response {
        text(
            status: status, reason, method: method, report: .refused(reason: reason), extra: extra,
            closesConnection: closesConnection)
    }
}

/// A response body that comes in pieces (from a loader, or from the store),
/// pulled by the connection at its client's pace. Every wait has a deadline:
/// the connection decides how long the origin may take and watches its
/// client meanwhile.
protocol BodyStream: AnyObject, Sendable {
    /// Starts producing; later calls do nothing.
    func start()
    /// The next pieces, waiting until `deadline` (``BodyStep/pending`` when none came).
    func next(until deadline: Date) -> BodyStep
    /// Stops producing; a waiting ``next(until:)`` returns. Any thread.
    func cancel()
}

/// What a ``BodyStream`` gave.
enum BodyStep {
    case data([Data])
    case end
    case failed(StreamingError)
    /// Nothing by the deadline.
    case pending
}

/// A response that waits on the origin before it is known (the content
/// information of a media resource, an HLS resource): the connection waits
/// for it with deadlines, watching its client, and writes what it gives.
final class PendingResponse: Sendable {
    private let step: @Sendable (Date) -> WaitStep<Response>
    private let abandonment: @Sendable () -> Void
    /// The answer when the origin takes longer than ``MediaServerConfiguration/originWaitTimeout``.
    let timeout: Response

    init(
        timeout: Response, wait step: @escaping @Sendable (Date) -> WaitStep<Response>,
        abandon: @escaping @Sendable () -> Void
    ) {
        self.timeout = timeout
        self.step = step
        self.abandonment = abandon
    }

    /// The response if it is known by `deadline`.
    func wait(until deadline: Date) -> WaitStep<Response> { step(deadline) }

    /// Stops what it waits on (the client left, the origin took too long, the server stops). Any thread.
    func abandon() { abandonment() }
}
