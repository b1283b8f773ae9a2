import Foundation
import MediaStore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``Origin`` over `URLSession` (FoundationNetworking on Linux).
///
/// Sends the caller's headers as they are, asks for `identity` encoding
/// (ranges count bytes of the file, not of a gzip stream), never uses
/// URLSession's own cache, and streams the body as it arrives.
///
/// ```swift
/// let origin = HTTPOrigin(headers: ["Authorization": "Bearer …"])
/// ```
public final class HTTPOrigin: Origin {
    /// Seconds without any byte before a request fails.
    public let timeout: TimeInterval
    /// Headers sent with every request (a request's own headers win).
    public let headers: [String: String]
    private let session: URLSession
    private let delegate: HTTPSessionDelegate

    /// - parameter timeout: idle timeout per request, in seconds.
    /// - parameter headers: headers added to every request, such as `User-Agent` or `Authorization`.
    public init(timeout: TimeInterval = 30, headers: [String: String] = [:]) {
        self.timeout = timeout
        self.headers = headers
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 6
        let delegate = HTTPSessionDelegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    public func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in request.allHeaders { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if urlRequest.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        // Whether the task was started, and whether the fetch was cancelled:
        // URLSession on Linux never calls back for a task cancelled before
        // it was resumed and resumed after, so a cancellation that comes
        // first (before the handler is installed, or between registering and
        // resuming) must end the fetch here instead of cancelling the task.
        let gate = Locked((started: false, cancelled: false))
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<OriginResponse, any Error>) in
                    delegate.register(task, continuation: continuation)
                    let start = gate.withLock { gate -> Bool in
                        gate.started = !gate.cancelled
                        return gate.started
                    }
                    if start { task.resume() } else { delegate.fail(task, with: .cancelled) }
                }
            } onCancel: {
                let started = gate.withLock { gate -> Bool in
                    gate.cancelled = true
                    return gate.started
                }
                if started { task.cancel() }
            }
        } catch let error as OriginError {
            throw error
        } catch {
            throw .connectionLost(reason: String(describing: error))
        }
    }
}
