import Foundation
import MediaStore

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
    private struct TaskState {
        var head: CheckedContinuation<OriginResponse, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
        let limits: OriginLimits
        /// Bytes yielded to the body and not yet taken by its reader.
        var buffered = 0
        var meter: BodySpeedMeter
    }

    private let tasks = Locked<[Int: TaskState]>([:])

    /// Tasks registered and not yet completed (for tests).
    var liveTaskCount: Int { tasks.withLock { $0.count } }

    func register(
        _ task: URLSessionTask, limits: OriginLimits = OriginLimits(),
        continuation: CheckedContinuation<OriginResponse, any Error>
    ) {
        let state = TaskState(head: continuation, limits: limits, meter: BodySpeedMeter(limits: limits, now: .now))
        tasks.withLock { $0[task.taskIdentifier] = state }
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
        let head = tasks.withLock { tasks -> CheckedContinuation<OriginResponse, any Error>? in
            guard var state = tasks[id] else { return nil }
            let head = state.head
            state.head = nil
            state.body = continuation
            state.meter.restart(at: .now)
            tasks[id] = state
            return head
        }
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
