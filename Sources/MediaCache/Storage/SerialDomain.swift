import Dispatch
import Foundation
import MediaStore

/// The one serialization domain of a storage and all of its views: a serial
/// queue that sync calls, async calls and observer registration all go
/// through. Re-entrant, like GRDB's database queues: a call made while
/// already inside the domain (from an observer, or from code the domain
/// runs) runs inline instead of deadlocking.
@usableFromInline
final class SerialDomain: Sendable {
    /// The queue operations run on.
    @usableFromInline let queue: DispatchQueue
    /// Where completion handlers run: outside the domain, in order, so that a
    /// completion may call the sync API or block on another queue freely.
    let completionQueue: DispatchQueue
    @usableFromInline let token: UInt

    @usableFromInline static let specificKey = DispatchSpecificKey<UInt>()
    private static let counter = Locked<UInt>(0)

    init(label: String) {
        queue = DispatchQueue(label: label)
        completionQueue = DispatchQueue(label: label + ".completion")
        token = Self.counter.withLock { value in
            value += 1
            return value
        }
        queue.setSpecific(key: Self.specificKey, value: token)
    }

    /// Whether the caller is already inside this domain.
    @inlinable
    var isCurrent: Bool {
        DispatchQueue.getSpecific(key: Self.specificKey) == token
    }

    /// Runs `body` inside the domain and returns its result.
    ///
    /// Goes through the non-generic `DispatchQueue.sync(execute:)`: the
    /// generic overload runs unspecialized inside Dispatch, looking up type
    /// metadata for `R` on every call, which cost more than a 1 KiB read.
    @inlinable
    func sync<R>(_ body: () throws -> R) rethrows -> R {
        if isCurrent { return try body() }
        return try Self.run(on: queue, body, rescue: { throw $0 })
    }

    /// Runs `work` on `queue` and returns its result; an error it throws
    /// goes through `rescue` (which rethrows it), the way Dispatch's own
    /// generic `sync` keeps `rethrows`.
    @inlinable
    static func run<R>(on queue: DispatchQueue, _ work: () throws -> R, rescue: (any Error) throws -> R) rethrows -> R {
        var result: R?
        var failure: (any Error)?
        queue.sync {
            do { result = try work() } catch { failure = error }
        }
        if let failure { return try rescue(failure) }
        return result!
    }
}
