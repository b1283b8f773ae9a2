/// Who a transfer from the origin is for. A transfer yields, between
/// chunks, to any busy transfer of a higher priority.
public enum FetchPriority: Int, Sendable, Codable, Comparable, CaseIterable, CustomStringConvertible {
    /// An offline download (and a discretionary one: it waits the same way).
    case download = 0
    /// Warming the next tracks of a playlist.
    case preload = 1
    /// Bytes a player is waiting for.
    case playback = 2

    public static func < (lhs: FetchPriority, rhs: FetchPriority) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String {
        switch self {
        case .download: "download"
        case .preload: "preload"
        case .playback: "playback"
        }
    }
}
