import Foundation

extension DownloadFailure {
    /// The failure a download reports for a loader's error.
    public init(_ error: StreamingError) {
        switch error {
        case .origin(.httpStatus(let code, _)): self = .origin(status: code)
        case .origin(let origin): self = .transfer(origin.description)
        case .store(let store): self = .storage(String(describing: store))
        case .notCacheable(let reason): self = .unsupported(reason)
        case .cancelled: self = .userCancelled
        case .resourceChanged, .outOfRange: self = .transfer(error.description)
        }
    }
}
