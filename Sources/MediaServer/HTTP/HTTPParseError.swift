/// Why a request head was refused; each maps to the status the server answers.
public enum HTTPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not HTTP/1.x syntax (bad request line, bad header field, bare CR,
    /// obsolete line folding, a missing or repeated `Host`): 400.
    case malformed(reason: String)
    /// The request line is longer than ``HTTPLimits/maxRequestLineBytes``: 414.
    case requestLineTooLong
    /// The head is longer than ``HTTPLimits/maxHeadBytes``: 431.
    case headTooLarge
    /// More header fields than ``HTTPLimits/maxHeaderCount``: 431.
    case tooManyHeaders
    /// A version other than HTTP/1.0 or HTTP/1.1: 505.
    case unsupportedVersion
    /// The request announces a body (the server takes none): 413.
    case bodyNotAccepted
    /// A `Transfer-Encoding` on a request: 501.
    case transferEncodingNotImplemented

    /// The status code the server answers with.
    public var status: Int {
        switch self {
        case .malformed: 400
        case .requestLineTooLong: 414
        case .headTooLarge, .tooManyHeaders: 431
        case .unsupportedVersion: 505
        case .bodyNotAccepted: 413
        case .transferEncodingNotImplemented: 501
        }
    }

    public var description: String {
        switch self {
        case .malformed(let reason): "malformed request: \(reason)"
        case .requestLineTooLong: "request line too long"
        case .headTooLarge: "request header fields too large"
        case .tooManyHeaders: "too many header fields"
        case .unsupportedVersion: "HTTP version not supported"
        case .bodyNotAccepted: "request bodies are not accepted"
        case .transferEncodingNotImplemented: "Transfer-Encoding on a request is not implemented"
        }
    }
}
