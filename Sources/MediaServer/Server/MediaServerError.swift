/// Why a ``MediaServer`` could not start.
public enum MediaServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The socket could not be bound or could not listen (port in use, no permission).
    case cannotListen(port: Int, reason: String)
    /// A secret with characters other than letters, digits, `-` and `_`.
    case invalidSecret

    public var description: String {
        switch self {
        case .cannotListen(let port, let reason): "cannot listen on port \(port): \(reason)"
        case .invalidSecret: "the secret may only hold letters, digits, - and _"
        }
    }
}
