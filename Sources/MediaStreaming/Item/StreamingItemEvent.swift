import Foundation
import MediaStore

/// What a ``StreamingItem`` reports: the same events as its delegate.
public enum StreamingItemEvent: Sendable, Equatable {
    /// The content information is known: the player can start.
    case readyToPlay(ContentInformation)
    /// Bytes of the resource in the store so far, of its length (while ``StreamingItem/download()`` runs).
    case downloadProgress(bytes: Int, total: Int)
    /// Every byte is in the store.
    case finishedDownloading(EntryInfo?)
    /// ``StreamingItem/download()`` failed.
    case downloadFailed(StreamingError)
    /// A request to the origin failed and is being retried: playback may stall.
    case playbackStalled(OriginError)
    /// The item plays without being cached, for this reason.
    case cachingSkipped(reason: String)
}
