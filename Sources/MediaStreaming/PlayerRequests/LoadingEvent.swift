import Foundation

/// What the loader tells the owner of a ``LoadingRequest`` (a player
/// simulator, or the AVFoundation glue that forwards to AVFoundation's request).
public enum LoadingEvent: Sendable {
    /// The content-information request was filled.
    case contentInformation(ContentInformation)
    /// Bytes for the data request, in order, starting at its current offset.
    case data(Data)
    /// The request finished: everything asked for was given.
    case finished
    /// The request failed.
    case failed(StreamingError)
}
