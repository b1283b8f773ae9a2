import Foundation

/// Returned by an observer registration; ``cancel()`` ends the observation.
public final class ObservationToken: @unchecked Sendable {
    private let lock = NSLock()
    private var cancellationClosure: (() -> Void)?

    init(cancellationClosure: @escaping () -> Void) {
        self.cancellationClosure = cancellationClosure
    }

    /// Stops the observation. Calling it again does nothing.
    public func cancel() {
        lock.lock()
        let closure = cancellationClosure
        cancellationClosure = nil
        lock.unlock()
        closure?()
    }
}
