import Foundation

/// Why a ``DownloadQueue`` call could not be done.
public enum DownloadQueueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No download has this id (removed, or never queued).
    case unknownDownload(UUID)
    /// No performer is registered for this kind of download.
    case unknownKind(String)
    /// The download's status does not take the event.
    case transition(DownloadTransitionError)
    /// The download index could not be read or written.
    case index(DownloadIndexError)

    public var description: String {
        switch self {
        case .unknownDownload(let id): "no download \(id)"
        case .unknownKind(let kind): "no performer for downloads of kind \(kind)"
        case .transition(let error): error.description
        case .index(let error): "download index: \(error)"
        }
    }
}
