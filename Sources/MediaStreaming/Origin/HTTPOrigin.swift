import Foundation
import MediaStore
import MediaSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// An ``Origin`` over `URLSession` (FoundationNetworking on Linux).
///
/// Sends the caller's headers as they are, asks for `identity` encoding
/// (ranges count bytes of the file, not of a gzip stream), never uses
/// URLSession's own cache, and streams the body as it arrives, held to
/// its ``limits`` (a minimum speed, and bytes buffered ahead of the reader).
/// Redirects are followed hop by hop as its ``RedirectPolicy`` says, and
/// never carry the caller's headers to another origin.
///
/// An origin that encodes the body anyway (`Content-Encoding: gzip`)
/// gets it decoded by URLSession: such a `206` is refused with
/// ``OriginError/contentEncoded(_:)`` (its range counts encoded bytes),
/// and such a `200` comes without `Content-Length` (it counted the encoded
/// bytes): a body of unknown length, ending where the decoded bytes end.
///
/// ```swift
/// let origin = HTTPOrigin(headers: ["Authorization": "Bearer …"])
/// ```
public final class HTTPOrigin: Origin {
    /// Time without any byte before a request fails.
    public let timeout: Duration
    /// Headers sent with every request (a request's own headers win).
    public let headers: [String: String]
    /// Which redirects are followed (``RedirectPolicy/standard`` by default).
    public let redirects: RedirectPolicy
    /// The speed and buffering bounds of every response body.
    public let limits: OriginLimits
    private let client: HTTPSessionPool.Client

    /// - parameter timeout: idle timeout per request.
    /// - parameter headers: headers added to every request, such as `User-Agent` or `Authorization`.
    /// - parameter redirects: the check of every redirect hop and their number.
    /// - parameter limits: the speed and buffering bounds of every response body.
    ///
    /// Origins share one URLSession per timeout for the life of the process
    /// (tearing a URLSession down crashes FoundationNetworking on Linux now
    /// and then): a response body outlives the origin that fetched it, and
    /// its transfer is cancelled when its reader drops it.
    public init(
        timeout: Duration = .seconds(30), headers: [String: String] = [:], redirects: RedirectPolicy,
        limits: OriginLimits = OriginLimits()
    ) {
        self.timeout = timeout
        self.headers = headers
        self.redirects = redirects
        self.limits = limits
        self.client = HTTPSessionPool.client(timeout: timeout.inSeconds)
    }

    /// An origin that follows redirects as ``RedirectPolicy/standard`` says.
    ///
    /// - parameter timeout: idle timeout per request.
    /// - parameter headers: headers added to every request, such as `User-Agent` or `Authorization`.
    /// - parameter limits: the speed and buffering bounds of every response body.
    public convenience init(
        timeout: Duration = .seconds(30), headers: [String: String] = [:], limits: OriginLimits = OriginLimits()
    ) {
        self.init(timeout: timeout, headers: headers, redirects: .standard, limits: limits)
    }

    /// ``init(timeout:headers:redirects:limits:)`` with the timeout in seconds.
    @available(*, deprecated, message: "pass the timeout as a Duration: timeout: .seconds(30)")
    public convenience init(
        timeout seconds: TimeInterval, headers: [String: String] = [:], redirects: RedirectPolicy,
        limits: OriginLimits = OriginLimits()
    ) {
        self.init(timeout: .seconds(seconds), headers: headers, redirects: redirects, limits: limits)
    }

    /// ``init(timeout:headers:limits:)`` with the timeout in seconds.
    @available(*, deprecated, message: "pass the timeout as a Duration: timeout: .seconds(30)")
    public convenience init(
        timeout seconds: TimeInterval, headers: [String: String] = [:], limits: OriginLimits = OriginLimits()
    ) {
        self.init(timeout: .seconds(seconds), headers: headers, redirects: .standard, limits: limits)
    }

    public func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout.inSeconds)
        for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        for (name, value) in request.allHeaders { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if urlRequest.value(forHTTPHeaderField: "Accept-Encoding") == nil {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        // What a hop to another origin carries: the range and validators, nothing of the caller's.
        var protocolRequest = request
        protocolRequest.headers = [:]
        var crossOrigin = protocolRequest.allHeaders
        crossOrigin["Accept-Encoding"] = "identity"
        let redirectState = HTTPSessionDelegate.Redirects(
            policy: redirects, first: request.url, sameOriginHeaders: urlRequest.allHTTPHeaderFields ?? [:],
            crossOriginHeaders: crossOrigin)
        let task = client.session.dataTask(with: urlRequest)
        let delegate = client.delegate
        // Whether the task was started, and whether the fetch was cancelled:
        // URLSession on Linux never calls back for a task cancelled before
        // it was resumed and resumed after, so a cancellation that comes
        // first (before the handler is installed, or between registering and
        // resuming) must end the fetch here instead of cancelling the task.
        let gate = Locked((started: false, cancelled: false))
        var limits = self.limits
        if let bound = request.maxBufferedBytes { limits.bufferedBodyBytes = max(1, bound) }
        let response: OriginResponse
        do {
            response = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<OriginResponse, any Error>) in
                    delegate.register(
                        task, limits: limits, maxBodyBytes: request.maxBodyBytes, continuation: continuation,
                        redirects: redirectState)
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
        return try Self.decoded(response)
    }

    /// `response` as its decoded body makes it: an encoded `206` is refused
    /// (dropping it cancels its transfer), an encoded `200` loses the
    /// `Content-Length` of its encoded bytes.
    private static func decoded(_ response: OriginResponse) throws(OriginError) -> OriginResponse {
        guard let encoding = response.contentEncoding else { return response }
        if response.statusCode == 206 { throw .contentEncoded(encoding) }
        var response = response
        response.headers["content-length"] = nil
        return response
    }
}
