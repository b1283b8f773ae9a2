/// Why a download failed.
public enum DownloadFailure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Cancelled (``DownloadEvent/cancel``, or cancel-all).
    case userCancelled
    /// The origin answered with this HTTP status.
    case origin(status: Int)
    /// The transfer failed (after retries): the reason.
    case transfer(String)
    /// The store failed: the reason.
    case storage(String)
    /// The resource cannot be downloaded for offline use (a live playlist,
    /// FairPlay keys, …): the reason.
    case unsupported(String)

    public var description: String {
        switch self {
        case .userCancelled: "cancelled by the user"
        case .origin(let status): "origin answered \(status)"
        case .transfer(let reason): "transfer failed: \(reason)"
        case .storage(let reason): "store failed: \(reason)"
        case .unsupported(let reason): "unsupported: \(reason)"
        }
    }
}
