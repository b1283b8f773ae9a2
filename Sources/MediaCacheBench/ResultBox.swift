import Foundation

/// A result handed from a task to a blocked thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {  // guarded by `lock`
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    func set(_ value: Result<T, any Error>) { lock.withLock { result = value } }

    func get() throws -> T {
        guard let result = lock.withLock({ result }) else { throw CocoaError(.featureUnsupported) }
        return try result.get()
    }
}
