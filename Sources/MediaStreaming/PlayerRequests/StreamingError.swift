import Foundation
import MediaStore

/// Why a loading request failed. The player always gets one of these.
public enum StreamingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The origin failed (status, connection, malformed or lying response).
    case origin(OriginError)
    /// The store failed in a way the loader could not work around.
    case store(StoreError)
    /// The resource changed at the origin while it was being read
    /// (a different validator or length); the old content was dropped.
    case resourceChanged(url: URL)
    /// The request asked for bytes outside the resource.
    case outOfRange(offset: Int, length: Int)
    /// The resource cannot be kept in the store (such as one larger than
    /// its whole size limit): it plays, but cannot be downloaded.
    case notCacheable(reason: String)
    /// The request was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .origin(let error): "origin: \(error)"
        case .store(let error): "store: \(error)"
        case .resourceChanged(let url): "\(url.absoluteString.prefix(200)) changed at the origin while being read"
        case .outOfRange(let offset, let length): "offset \(offset) is outside the resource (length \(length))"
        case .notCacheable(let reason): "not cacheable: \(reason)"
        case .cancelled: "cancelled"
        }
    }

    package static func wrap(_ error: any Error) -> StreamingError {
        switch error {
        case let error as StreamingError: error
        case let error as OriginError: error == .cancelled ? .cancelled : .origin(error)
        case let error as StoreError: .store(error)
        case is CancellationError: .cancelled
        default: .origin(.connectionLost(reason: String(describing: error)))
        }
    }
}
