import Foundation
import HLSPlaylist

/// Why an HLS asset could not be downloaded (or served from the cache).
public enum HLSDownloadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A playlist could not be parsed (with its URL; the error has the line).
    case playlist(url: URL, PlaylistError)
    /// No variant or rendition matches the selection.
    case selection(SelectionError)
    /// The asset cannot be kept offline: live (no `EXT-X-ENDLIST`) or
    /// SAMPLE-AES / FairPlay (`skd://`) keys.
    case plan(HLSPlanError)
    /// Fetching or storing a resource failed.
    case streaming(StreamingError)
    /// A segment, init segment or key is larger than its limit
    /// (``HLSLimits``): `bytes` announced or received, over `limit`. Its
    /// transfer was stopped and nothing of it stored.
    case resourceTooLarge(url: URL, bytes: Int, limit: Int)
    /// A media playlist was given where a master playlist was expected, or
    /// the other way round.
    case unexpectedPlaylistKind(url: URL)
    /// A playlist names `url` on another origin that the downloader's
    /// ``PlaylistURIRule`` refuses (nothing of the asset is fetched after).
    case uriRefused(url: URL, playlistURL: URL, reason: String)

    public var description: String {
        switch self {
        case .playlist(let url, let error): "\(url.absoluteString.prefix(200)): \(error)"
        case .selection(let error): "selection: \(error)"
        case .plan(let error): String(describing: error)
        case .streaming(let error): String(describing: error)
        case .resourceTooLarge(let url, let bytes, let limit):
            "\(url.absoluteString.prefix(200)) is too large: \(bytes) bytes, over the limit of \(limit)"
        case .unexpectedPlaylistKind(let url): "\(url.absoluteString.prefix(200)) is not the kind of playlist expected"
        case .uriRefused(let url, let playlistURL, let reason):
            "\(playlistURL.absoluteString.prefix(200)) names \(url.absoluteString.prefix(200)), refused: \(reason)"
        }
    }

    /// Whether the download was cancelled (not a failure).
    public var isCancellation: Bool { self == .streaming(.cancelled) }

    static func wrap(_ error: any Error) -> HLSDownloadError {
        switch error {
        case let error as HLSDownloadError: error
        case let error as SelectionError: .selection(error)
        case let error as HLSPlanError: .plan(error)
        default: .streaming(StreamingError.wrap(error))
        }
    }
}
