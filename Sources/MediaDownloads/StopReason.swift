import MediaStreaming

/// Why a download was stopped.
public enum StopReason: Sendable, Hashable, Codable, CustomStringConvertible {
    /// ``DownloadEvent/stop(_:)`` from the person (a pause button).
    case user
    /// The app's own reason, kept as given.
    case app(String)

    public var description: String {
        switch self {
        case .user: "by the user"
        case .app(let reason): reason
        }
    }
}
