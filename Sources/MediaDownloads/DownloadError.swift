import Foundation
import MediaStore
import MediaStreaming

/// Why a download (of any kind), or a call of the ``DownloadQueue``, failed.
///
/// A queued download's failure is kept in the download index
/// (``DownloadStatus/failed(_:)``): its `Codable` form keeps every case a
/// download can end with; a ``store(_:)`` failure read back keeps its
/// description only (as `StoreError.storage(code: 0, message:)`).
public indirect enum DownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Cancelled (``MediaDownload/cancel()``, ``DownloadQueue/cancel(_:)``, cancel-all).
    case cancelled
    /// The origin answered `url` with this HTTP status.
    case origin(status: Int, url: URL?)
    /// The transfer failed (after retries): the reason.
    case transfer(String)
    /// The store failed.
    case store(StoreError)
    /// The resource cannot be downloaded for offline use: a live playlist
    /// (no `EXT-X-ENDLIST`), SAMPLE-AES or FairPlay (`skd://`) keys, a
    /// response that is not cacheable, no performer for its kind.
    case unsupported(String)
    /// A playlist could not be read (or was not of the kind expected): its URL and why.
    case playlist(url: URL, reason: String)
    /// No variant or rendition matches the selection asked for.
    case selection(String)
    /// A playlist names `url` on another origin that the download's
    /// `PlaylistURIRule` refuses (nothing of the asset is fetched after).
    case uriRefused(url: URL, playlistURL: URL, reason: String)
    /// A resource is larger than its limit: `bytes` announced or received,
    /// over `limit`. Its transfer was stopped and nothing of it stored.
    case resourceTooLarge(url: URL, bytes: Int, limit: Int)
    /// No download of the queue has this id (removed, or never queued).
    case unknownDownload(UUID)
    /// No performer of the queue is registered for this kind of download.
    case unknownKind(String)
    /// The download's status does not take the event (``DownloadLifecycle``).
    case transition(status: DownloadStatus, event: DownloadEvent)
    /// The download index is not one this version reads (or not an index).
    case index(String)
    /// Another ``DownloadQueue`` was opened over the same store after this
    /// one (in this process or another): this queue saves nothing more and
    /// runs no download; the newer one has them.
    case superseded

    public var description: String {
        switch self {
        case .cancelled: "cancelled"
        case .origin(let status, let url):
            url.map { "origin answered \(status) for \($0.absoluteString.prefix(200))" } ?? "origin answered \(status)"
        case .transfer(let reason): "transfer failed: \(reason)"
        case .store(let error): "store failed: \(error)"
        case .unsupported(let reason): "unsupported: \(reason)"
        case .playlist(let url, let reason): "\(url.absoluteString.prefix(200)): \(reason)"
        case .selection(let reason): "selection: \(reason)"
        case .uriRefused(let url, let playlistURL, let reason):
            "\(playlistURL.absoluteString.prefix(200)) names \(url.absoluteString.prefix(200)), refused: \(reason)"
        case .resourceTooLarge(let url, let bytes, let limit):
            "\(url.absoluteString.prefix(200)) is too large: \(bytes) bytes, over the limit of \(limit)"
        case .unknownDownload(let id): "no download \(id)"
        case .unknownKind(let kind): "no performer for downloads of kind \(kind)"
        case .transition(let status, let event): "a \(status) download cannot take \(event)"
        case .index(let reason): "download index: \(reason)"
        case .superseded: "a queue opened later over the same store has the downloads"
        }
    }

    /// Whether the download was cancelled (not a failure).
    public var isCancellation: Bool { self == .cancelled }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// The error as Apple's download APIs report it: ``cancelled`` is
    /// `NSUserCancelledError` in `NSCocoaErrorDomain` (what an
    /// `AVAssetDownloadTask` cancelled from its Live Activity fails with);
    /// any other case is its default bridging (`self as NSError`: the
    /// domain `MediaDownloads.DownloadError`, its case's code).
    public var cocoaError: NSError {
        self == .cancelled
            ? NSError(domain: NSCocoaErrorDomain, code: CocoaError.Code.userCancelled.rawValue) : self as NSError
    }

    /// The failure a download reports for a loader's error.
    public init(_ error: StreamingError) {
        switch error {
        case .origin(.httpStatus(let code, let url)): self = .origin(status: code, url: url)
        case .origin(let origin): self = .transfer(origin.description)
        case .store(let store): self = .store(store)
        case .notCacheable(let reason): self = .unsupported(reason)
        case .cancelled: self = .cancelled
        case .resourceChanged, .outOfRange: self = .transfer(error.description)
        }
    }

    /// `error` as a download failure: itself when it is one, else through
    /// ``init(_:)`` of the streaming error it is (a task's cancellation is ``cancelled``).
    package static func wrap(_ error: any Error) -> DownloadError {
        switch error {
        case let error as DownloadError: error
        case let error as StoreError: .store(error)
        default: DownloadError(StreamingError.wrap(error))
        }
    }
}

extension DownloadError: Codable {
    /// The form kept in the index (the case names of the index's first version).
    private enum Coded: Codable {
        case userCancelled
        case origin(status: Int, url: URL?)
        case transfer(String)
        case storage(String)
        case unsupported(String)
        case playlist(url: URL, reason: String)
        case selection(String)
        case uriRefused(url: URL, playlistURL: URL, reason: String)
        case resourceTooLarge(url: URL, bytes: Int, limit: Int)
    }

    public init(from decoder: any Decoder) throws {
        self =
            switch try Coded(from: decoder) {
            case .userCancelled: .cancelled
            case .origin(let status, let url): .origin(status: status, url: url)
            case .transfer(let reason): .transfer(reason)
            case .storage(let reason): .store(.storage(code: 0, message: reason))
            case .unsupported(let reason): .unsupported(reason)
            case .playlist(let url, let reason): .playlist(url: url, reason: reason)
            case .selection(let reason): .selection(reason)
            case .uriRefused(let url, let playlistURL, let reason):
                .uriRefused(url: url, playlistURL: playlistURL, reason: reason)
            case .resourceTooLarge(let url, let bytes, let limit):
                .resourceTooLarge(url: url, bytes: bytes, limit: limit)
            }
    }

    public func encode(to encoder: any Encoder) throws {
        let coded: Coded =
            switch self {
            case .cancelled: .userCancelled
            case .origin(let status, let url): .origin(status: status, url: url)
            case .transfer(let reason): .transfer(reason)
            case .store(let error): .storage(String(describing: error))
            case .unsupported(let reason): .unsupported(reason)
            case .playlist(let url, let reason): .playlist(url: url, reason: reason)
            case .selection(let reason): .selection(reason)
            case .uriRefused(let url, let playlistURL, let reason):
                .uriRefused(url: url, playlistURL: playlistURL, reason: reason)
            case .resourceTooLarge(let url, let bytes, let limit):
                .resourceTooLarge(url: url, bytes: bytes, limit: limit)
            // Failures of queue calls, never a download's end: kept as their description.
            case .unknownDownload, .unknownKind, .transition, .index, .superseded: .transfer(description)
            }
        try coded.encode(to: encoder)
    }
}
