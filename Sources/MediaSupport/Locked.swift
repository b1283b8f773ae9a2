import Foundation

/// A value guarded by a lock: the one lock wrapper of the package
/// (MediaStore, MediaCache, MediaStreaming, MediaServer and CacheToolCore
/// use it).
///
/// Sendable only when the value is: the lock makes access to the value
/// exclusive, but a non-Sendable value could still escape `withLock`.
///
/// `withLock` is inlinable so that each use is specialized for its value
/// and closure (a store's read takes several locks).
package final class Locked<Value> {
    @usableFromInline let lock = NSLock()
    @usableFromInline var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value.
    @inlinable package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the value.
    package var current: Value { withLock { $0 } }
}

// Every access to `value` goes through `lock`.
extension Locked: @unchecked Sendable where Value: Sendable {}
