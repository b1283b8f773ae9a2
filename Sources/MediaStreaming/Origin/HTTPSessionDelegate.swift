import Foundation
import MediaStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Turns URLSession's delegate callbacks into a response head and a body stream per task.
// Unchecked: NSObject subclass; its only state is the lock-guarded `tasks` (continuations, not Sendable).
final class HTTPSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct TaskState {
        var head: CheckedContinuation<OriginResponse, any Error>?
        var body: AsyncThrowingStream<Data, any Error>.Continuation?
    }

    private let tasks = Locked<[Int: TaskState]>([:])

    /// Tasks registered and not yet completed (for tests).
    var liveTaskCount: Int { tasks.withLock { $0.count } }

    func register(_ task: URLSessionTask, continuation: CheckedContinuation<OriginResponse, any Error>) {
        tasks.withLock { $0[task.taskIdentifier] = TaskState(head: continuation) }
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
        let head = tasks.withLock { tasks -> CheckedContinuation<OriginResponse, any Error>? in
            let head = tasks[dataTask.taskIdentifier]?.head
            tasks[dataTask.taskIdentifier] = TaskState(head: nil, body: continuation)
            return head
        }
        let body = HTTPBodySource(pieces, of: dataTask).stream
        head?.resume(returning: OriginResponse(statusCode: status, headers: headers, body: body))
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let body = tasks.withLock { $0[dataTask.taskIdentifier]?.body }
        body?.yield(data)
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
