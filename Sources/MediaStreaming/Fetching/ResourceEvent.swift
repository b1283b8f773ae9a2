import Foundation

/// Things worth telling the app about one resource, beyond bytes.
public enum ResourceEvent: Sendable, Equatable {
    /// The content information is known.
    case ready(ContentInformation)
    /// The resource is played without caching, for this reason (such as
    /// being larger than the store's whole size limit).
    case cachingSkipped(reason: String)
    /// An expired entry was revalidated; `changed` tells whether the old content was dropped.
    case revalidated(changed: Bool)
    /// A request failed transiently and is retried: playback may stall.
    case retrying(OriginError)
    /// Bytes of the entry now in the store, and its length.
    case progress(cached: Int, length: Int)
    /// Every byte is in the store.
    case complete
}
