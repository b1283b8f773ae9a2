import Foundation

/// Why bytes could not be had from the origin. Every failure a player
/// sees is one of these (or a ``StreamingError``), never an untyped error.
public enum OriginError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The origin answered with an error status (4xx/5xx) or one the
    /// loader cannot use.
    case httpStatus(code: Int, url: URL)
    /// The connection failed or dropped before or during the body.
    case connectionLost(reason: String)
    /// No byte arrived for longer than the allowed stall time.
    case stalled(seconds: Double)
    /// The body ended before the announced length.
    case truncated(expected: Int, received: Int)
    /// The body ran past the announced or known length.
    case overlong(expected: Int)
    /// `Content-Range` does not describe the bytes asked for.
    case contentRangeMismatch(requested: String, received: String)
    /// A header the loader needs is malformed.
    case malformedResponse(reason: String)
    /// The body arrived slower than the low-speed limit
    /// (``OriginLimits/lowSpeedBytesPerSecond``): `bytes` in `seconds`.
    case tooSlow(bytes: Int, seconds: Double)
    /// The reader fell more than ``OriginLimits/bufferedBodyBytes`` behind
    /// the body (`bufferedBytes` received and not taken): the transfer was
    /// ended, the reader takes what was buffered, then this; asking again
    /// from there goes on.
    case readerTooSlow(bufferedBytes: Int)
    /// The body has a `Content-Encoding` (such as `gzip`) though `identity`
    /// was asked for: its length and ranges count encoded bytes, so it
    /// cannot fill or serve ranges of the resource.
    case contentEncoded(String)
    /// The body is longer than the request allows (``OriginRequest/maxBodyBytes``):
    /// `bytes` announced, or received so far; refused at its head when announced.
    case bodyTooLarge(bytes: Int, limit: Int)
    /// The request was cancelled.
    case cancelled
    /// The origin at `from` redirected to `to`, which the ``RedirectPolicy`` refuses.
    case redirectRefused(from: URL, to: URL)
    /// The request was redirected more than `limit` times (``RedirectPolicy/maxRedirects``); `url` is the last hop asked for.
    case tooManyRedirects(limit: Int, url: URL)

    /// Whether trying again may help (dropped connections, stalls, slow
    /// or truncated bodies, 5xx), as opposed to a definite answer.
    public var isTransient: Bool {
        switch self {
        case .connectionLost, .stalled, .truncated, .tooSlow, .readerTooSlow: true
        case .httpStatus(let code, _): code >= 500 || code == 408 || code == 429
        default: false
        }
    }

    public var description: String {
        switch self {
        case .httpStatus(let code, let url): "HTTP \(code) from \(url.absoluteString.prefix(200))"
        case .connectionLost(let reason): "connection lost: \(reason)"
        case .stalled(let seconds): "no data for \(seconds) s"
        case .truncated(let expected, let received): "body ended after \(received) of \(expected) bytes"
        case .overlong(let expected): "body longer than the \(expected) bytes announced"
        case .contentRangeMismatch(let requested, let received):
            "asked for \(requested), got Content-Range \(received)"
        case .malformedResponse(let reason): "malformed response: \(reason)"
        case .tooSlow(let bytes, let seconds):
            "body too slow: \(bytes) bytes in \((seconds * 10).rounded() / 10) s"
        case .bodyTooLarge(let bytes, let limit): "body of \(bytes) bytes or more, over the limit of \(limit)"
        case .readerTooSlow(let buffered): "reader fell \(buffered) bytes behind the body"
        case .contentEncoded(let encoding): "body sent with Content-Encoding \(encoding.prefix(40)) instead of identity"
        case .cancelled: "cancelled"
        case .redirectRefused(let from, let to):
            "redirect refused from \(WebOrigin(from)?.description ?? "?") to \(to.absoluteString.prefix(200))"
        case .tooManyRedirects(let limit, let url):
            "more than \(limit) redirects (last to \(url.absoluteString.prefix(200)))"
        }
    }
}
