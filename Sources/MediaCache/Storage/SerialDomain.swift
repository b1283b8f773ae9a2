import Dispatch
import Foundation

/// The one serialization domain of a storage and all of its views: a serial
/// queue that sync calls, async calls and observer registration all go
/// through. Re-entrant, like GRDB's database queues: a call made while
/// already inside the domain (from an observer, or from code the domain
/// runs) runs inline instead of deadlocking.
final class SerialDomain: Sendable {
    /// The queue operations run on.
    let queue: DispatchQueue
    /// Where completion handlers run: outside the domain, in order, so that a
    /// completion may call the sync API or block on another queue freely.
    let completionQueue: DispatchQueue
    private let token: UInt

    private static let specificKey = DispatchSpecificKey<UInt>()
    private static let counter = Counter()

    init(label: String) {
        queue = DispatchQueue(label: label)
        completionQueue = DispatchQueue(label: label + ".completion")
        token = Self.counter.next()
        queue.setSpecific(key: Self.specificKey, value: token)
    }

    /// Whether the caller is already inside this domain.
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.specificKey) == token
    }

    /// Runs `body` inside the domain and returns its result.
    func sync<R>(_ body: () throws -> R) rethrows -> R {
        if isCurrent { return try body() }
        return try queue.sync(execute: body)
    }

    private final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value: UInt = 0

        func next() -> UInt {
            lock.lock()
            defer { lock.unlock() }
            value += 1
            return value
        }
    }
}
