import Foundation

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
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<OriginResponse, any Error>) in
                    delegate.register(task, continuation: continuation)
                    task.resume()
                }
            } onCancel: {
                task.cancel()
            }
        } catch let error as OriginError {
            throw error
        } catch {
            throw .connectionLost(reason: String(describing: error))
        }
    }
}
