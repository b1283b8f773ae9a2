import Foundation
import MediaStore
import MediaSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns URLSession's delegate callbacks into a response head and a body stream per task.
///
/// Each body is held to its ``OriginLimits``: the bytes buffered for its
/// reader (past ``OriginLimits/bufferedBodyBytes`` the body ends with
/// ``OriginError/readerTooSlow(bufferedBytes:)`` after the bytes already
/// buffered), and its speed (below ``OriginLimits/lowSpeedBytesPerSecond``
/// over a window it fails with ``OriginError/tooSlow(bytes:seconds:)``).
/// Either way its task is cancelled.
///
/// FoundationNetworking cannot pause a running transfer: `suspend()` on a
/// data task closes its connection and `resume()` sends the request again
/// (the reader then waits forever), so a reader that falls behind ends the
/// transfer instead; whoever reads asks again from where it got to.
// Unchecked: NSObject subclass; its only state is the lock-guarded `tasks` (continuations, not Sendable).
final class HTTPSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// How one task follows redirects: its policy, the hops so far, and
    /// the headers a hop carries on the first URL's origin and elsewhere.
    struct Redirects {
        var policy: RedirectPolicy
        var first: URL
        var sameOriginHeaders: [String: String]
        var crossOriginHeaders: [String: String]
        var current: URL
        var count = 0

        init(
            policy: RedirectPolicy, first: URL, sameOriginHeaders: [String: String],
            crossOriginHeaders: [String: String]
        ) {
            self.policy = policy
            self.first = first
            self.sameOriginHeaders = sameOriginHeaders
            self.crossOriginHeaders = crossOriginHeaders
            self.current = first
        }
    }

    private struct TaskState {
        var head: CheckedContinuation<OriginResponse, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
        var redirects: Redirects?
        let limits: OriginLimits
        /// The most body bytes the request takes (``OriginRequest/maxBodyBytes``).
        var maxBodyBytes: Int?
        /// Body bytes received so far.
        var received = 0
        /// Bytes yielded to the body and not yet taken by its reader.
        var buffered = 0
        var meter: BodySpeedMeter
    }

    private let tasks = Locked<[Int: TaskState]>([:])

    /// Tasks registered and not yet completed (for tests).
    var liveTaskCount: Int { tasks.withLock { $0.count } }

    func register(
        _ task: URLSessionTask, limits: OriginLimits = OriginLimits(), maxBodyBytes: Int? = nil,
        continuation: CheckedContinuation<OriginResponse, any Error>, redirects: Redirects? = nil
    ) {
        let state = TaskState(
            head: continuation, redirects: redirects, limits: limits, maxBodyBytes: maxBodyBytes,
            meter: BodySpeedMeter(limits: limits, now: .now))
        tasks.withLock { $0[task.taskIdentifier] = state }
    }

    /// Each hop is judged by the task's ``RedirectPolicy``: a refused one
    /// (or one too many) ends the task with a typed error before any body;
    /// a followed one gets its headers rebuilt (the caller's only on the
    /// first URL's origin).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let id = task.taskIdentifier
        // The policy's check runs outside the lock (it is the caller's code);
        // one task's hops come one at a time, so the state read stays current.
        guard let redirects = tasks.withLock({ $0[id]?.redirects }), let target = request.url else {
            completionHandler(nil)
            task.cancel()
            return
        }
        let from = redirects.current
        var refusal: OriginError?
        if redirects.count >= redirects.policy.maxRedirects {
            refusal = .tooManyRedirects(limit: redirects.policy.maxRedirects, url: target)
        } else if !redirects.policy.allows(from, target) {
            refusal = .redirectRefused(from: from, to: target)
        }
        if let refusal {
            let state = tasks.withLock { $0.removeValue(forKey: id) }
            state?.head?.resume(throwing: refusal)
            completionHandler(nil)
            task.cancel()
            return
        }
        tasks.withLock { tasks in
            tasks[id]?.redirects?.count += 1
            tasks[id]?.redirects?.current = target
        }
        var next = request
        next.allHTTPHeaderFields =
            WebOrigin.same(redirects.first, target) ? redirects.sameOriginHeaders : redirects.crossOriginHeaders
        completionHandler(next)
    }

    /// Ends a registered task that was never resumed: its head continuation
    /// throws `error` (URLSession will never call back for it).
    func fail(_ task: URLSessionTask, with error: OriginError) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        state.head?.resume(throwing: error)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let (pieces, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        var headers: [String: String] = [:]
        let status = (response as? HTTPURLResponse)?.statusCode ?? 200
        for (name, value) in (response as? HTTPURLResponse)?.allHeaderFields ?? [:] {
            headers[String(describing: name)] = String(describing: value)
        }
        let id = dataTask.taskIdentifier
        let announced = headers.first { $0.key.lowercased() == "content-length" }.flatMap { Int($0.value) }
        // Refused here, before the transfer reads any of the body.
        let refused = tasks.withLock { tasks -> (CheckedContinuation<OriginResponse, any Error>?, OriginError)? in
            guard let state = tasks[id], let limit = state.maxBodyBytes, let announced, announced > limit else {
                return nil
            }
            tasks[id] = nil
            return (state.head, .bodyTooLarge(bytes: announced, limit: limit))
        }
        if let (head, error) = refused {
            continuation.finish()
            completionHandler(.cancel)
            head?.resume(throwing: error)
            return
        }
        let known = tasks.withLock { tasks -> (head: CheckedContinuation<OriginResponse, any Error>?, Bool) in
            // A task ended already (a refused redirect) stays ended.
            guard var state = tasks[id] else { return (nil, false) }
            let head = state.head
            state.head = nil
            state.body = continuation
            state.meter.restart(at: .now)
            tasks[id] = state
            return (head, true)
        }
        guard known.1 else {
            continuation.finish()
            completionHandler(.cancel)
            return
        }
        let head = known.head
        let body = HTTPBodySource(pieces, of: dataTask) { [weak self] count in self?.taken(count, of: id) }.stream
        head?.resume(returning: OriginResponse(statusCode: status, headers: headers, body: body))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        let now = ContinuousClock.now
        let (body, failure) = tasks.withLock {
            tasks -> (AsyncThrowingStream<Data, any Error>.Continuation?, OriginError?) in
            guard var state = tasks[id], let body = state.body else { return (nil, nil) }
            if let slow = state.meter.received(data.count, at: now) {
                tasks[id] = nil
                return (body, .tooSlow(bytes: slow.bytes, seconds: slow.seconds))
            }
            state.received += data.count
            if let limit = state.maxBodyBytes, state.received > limit {
                tasks[id] = nil
                return (body, .bodyTooLarge(bytes: state.received, limit: limit))
            }
            if state.buffered + data.count > state.limits.bufferedBodyBytes {
                tasks[id] = nil
                return (body, .readerTooSlow(bufferedBytes: state.buffered))
            }
            state.buffered += data.count
            tasks[id] = state
            return (body, nil)
        }
        guard let body else { return }
        if let failure {
            // Removed above: the cancellation that follows reports nothing more.
            body.finish(throwing: failure)
            dataTask.cancel()
        } else {
            body.yield(data)
        }
    }

    /// The reader of task `id`'s body took `count` bytes.
    private func taken(_ count: Int, of id: Int) {
        tasks.withLock { $0[id]?.buffered -= count }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let state = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        let failure = error.map(Self.originError)
        if let head = state.head {
            head.resume(throwing: failure ?? OriginError.connectionLost(reason: "no response"))
        } else if let failure {
            state.body?.finish(throwing: failure)
        } else {
            state.body?.finish()
        }
    }

    private static func originError(_ error: any Error) -> OriginError {
        let nsError = error as NSError
        if nsError.domain == NSURLErrorDomain {
            switch nsError.code {
            case NSURLErrorCancelled: return .cancelled
            case NSURLErrorTimedOut: return .stalled(seconds: 0)
            default: break
            }
        }
        return .connectionLost(reason: nsError.localizedDescription)
    }
}
