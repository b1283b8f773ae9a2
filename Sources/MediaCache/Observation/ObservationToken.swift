import Foundation
import MediaStore
import MediaSupport

/// Returned by an observer registration; ``cancel()`` ends the observation.
// Unchecked: the closure (not Sendable, as upstream's observers) is only taken under the lock.
public final class ObservationToken: @unchecked Sendable {
    private let cancellationClosure: Locked<(() -> Void)?>

    init(cancellationClosure: @escaping () -> Void) {
        self.cancellationClosure = Locked(cancellationClosure)
    }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        let closure = cancellationClosure.withLock { closure in
            defer { closure = nil }
            return closure
        }
        closure?()
    }
}
