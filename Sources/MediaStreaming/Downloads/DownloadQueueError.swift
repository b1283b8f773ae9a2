import Foundation
import MediaStore

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
    /// A store call of the queue's own failed: a hold, release or removal
    /// of a download's entries, an eviction for the storage floor, or the
    /// read of what a new download already has.
    case store(StoreError)

    public var description: String {
        switch self {
        case .unknownDownload(let id): "no download \(id)"
        case .unknownKind(let kind): "no performer for downloads of kind \(kind)"
        case .transition(let error): error.description
        case .index(let error): "download index: \(error)"
        case .store(let error): "download queue store write: \(error)"
        }
    }
}
