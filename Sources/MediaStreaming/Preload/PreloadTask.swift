import Foundation
import MediaStore

/// One preload started by a ``Preloader``: wait for it or cancel it.
public final class PreloadTask: Sendable {
    /// The URL preloaded.
    public let url: URL
    /// Its cache key.
    public let cacheKey: String
    /// What it warms.
    public let amount: PreloadAmount
    let task: Task<Int, any Error>

    init(url: URL, cacheKey: String, amount: PreloadAmount, task: Task<Int, any Error>) {
        self.url = url
        self.cacheKey = cacheKey
        self.amount = amount
        self.task = task
    }

    /// Waits until the prefix is cached; returns its length in bytes (the
    /// bytes that play the duration asked for, or the byte count asked
    /// for, clamped to the resource). Throws ``StreamingError/cancelled``
    /// when cancelled.
    @discardableResult
    public func completion() async throws(StreamingError) -> Int {
        do {
            return try await task.value
        } catch {
            throw StreamingError.wrap(error)
        }
    }

    /// Stops it (at the next chunk boundary); what it cached stays cached.
    public func cancel() { task.cancel() }

    /// Whether it was cancelled.
    public var isCancelled: Bool { task.isCancelled }
}
