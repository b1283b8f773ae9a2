import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStreaming

/// Why one HLS resource could not be fetched, stored or served by an
/// ``HLSResourceStore`` (a download reports it as a `DownloadError`).
public enum HLSResourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A playlist could not be read (with its URL; the error has the line).
    case playlist(url: URL, PlaylistError)
    /// Fetching or storing the resource failed.
    case streaming(StreamingError)
    /// A segment, init segment or key is larger than its limit
    /// (`HLSLimits`): `bytes` announced or received, over `limit`. Its
    /// transfer was stopped and nothing of it stored.
    case resourceTooLarge(url: URL, bytes: Int, limit: Int)

    public var description: String {
        switch self {
        case .playlist(let url, let error): "\(url.absoluteString.prefix(200)): \(error)"
        case .streaming(let error): String(describing: error)
        case .resourceTooLarge(let url, let bytes, let limit):
            "\(url.absoluteString.prefix(200)) is too large: \(bytes) bytes, over the limit of \(limit)"
        }
    }

    /// Whether the fetch was cancelled (not a failure).
    public var isCancellation: Bool { self == .streaming(.cancelled) }

    /// The download failure it is.
    public var downloadError: DownloadError {
        switch self {
        case .playlist(let url, let error): .playlist(url: url, reason: String(describing: error))
        case .streaming(let error): DownloadError(error)
        case .resourceTooLarge(let url, let bytes, let limit): .resourceTooLarge(url: url, bytes: bytes, limit: limit)
        }
    }

    static func wrap(_ error: any Error) -> HLSResourceError {
        switch error {
        case let error as HLSResourceError: error
        default: .streaming(StreamingError.wrap(error))
        }
    }
}
