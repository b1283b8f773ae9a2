import Dispatch
import Foundation
import MediaStore
import MediaSupport

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

    /// Calls running inside the domain now, and how many have ended: what
    /// a read that runs outside the domain checks before it fills the
    /// memory tier (see ``Ticket``).
    @usableFromInline
    struct Activity: Sendable {
        @usableFromInline var inside = 0
        @usableFromInline var ended: UInt64 = 0
        @inlinable init() {}
    }

    /// Guards ``activity``. A storage's domain shares its memory tier's
    /// lock (``LRUCache/lock``), so that a get outside the domain takes its
    /// ticket with its memory lookup, and checks it with its fill, under
    /// one lock each (``ticketUnderLock()``, ``isUnchangedUnderLock(since:)``).
    /// Not recursive: nothing that takes it may run while it is held.
    @usableFromInline let activityLock: NSLock
    /// Guarded by `activityLock` (see ``withActivity(_:)``), so its
    /// accesses are exclusive without the runtime's check.
    @exclusivity(unchecked) @usableFromInline nonisolated(unsafe) var activity = Activity()

    @inlinable
    func withActivity<R>(_ body: (inout Activity) -> R) -> R {
        activityLock.lock()
        defer { activityLock.unlock() }
        return body(&activity)
    }

    /// What a read outside the domain saw before it read the disk tier.
    @usableFromInline
    struct Ticket: Sendable {
        @usableFromInline let ended: UInt64
        @inlinable init(ended: UInt64) { self.ended = ended }
    }

    /// - parameter activityLock: the lock that guards the activity
    ///   counter: the memory tier's, for a storage's domain.
    init(label: String, activityLock: NSLock = NSLock()) {
        self.activityLock = activityLock
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
    ///
    /// Every call counts as a possible write for ``ticket()`` and
    /// ``isUnchanged(since:)``: while it runs, and once it has ended, a read
    /// that started outside the domain before it does not fill the memory
    /// tier with what it read.
    @inlinable
    func sync<R>(_ body: () throws -> R) rethrows -> R {
        if isCurrent { return try tracked(body) }
        return try Self.run(on: queue, { try tracked(body) }, rescue: { throw $0 })
    }

    @inlinable
    func tracked<R>(_ body: () throws -> R) rethrows -> R {
        enqueue()
        defer { dequeue() }
        return try body()
    }

    /// Taken by a read outside the domain before it reads the disk tier;
    /// `nil` while a call runs in the domain or a job waits for it (then
    /// the read goes through the domain, behind them).
    @inlinable
    func ticket() -> Ticket? {
        withActivity { _ in ticketUnderLock() }
    }

    /// ``ticket()`` for a caller holding ``activityLock`` (the memory
    /// tier's lock, taken for its lookup).
    @inlinable
    func ticketUnderLock() -> Ticket? {
        activity.inside == 0 ? Ticket(ended: activity.ended) : nil
    }

    /// Counts a job queued for the domain (`enqueue`) as running in it
    /// until it has run (`dequeue`), so that reads outside the domain wait
    /// for it as they would behind it: the store's removal reports,
    /// delivered by such a job, reach the memory tier before any read made
    /// after they arrived.
    @usableFromInline
    func enqueue() { withActivity { $0.inside += 1 } }

    /// The end of a job counted by ``enqueue()``.
    @usableFromInline
    func dequeue() {
        withActivity { activity in
            activity.inside -= 1
            activity.ended &+= 1
        }
    }

    /// Whether no call of the domain ran since `ticket` was taken, and none
    /// runs or waits now: then what the reader read from disk is still
    /// current, and it may fill the memory tier with it.
    @inlinable
    func isUnchanged(since ticket: Ticket) -> Bool {
        withActivity { _ in isUnchangedUnderLock(since: ticket) }
    }

    /// ``isUnchanged(since:)`` for a caller holding ``activityLock``: the
    /// memory tier's lock, taken for the fill, so that no domain call can
    /// change that tier between this check and the fill.
    @inlinable
    func isUnchangedUnderLock(since ticket: Ticket) -> Bool {
        activity.inside == 0 && activity.ended == ticket.ended
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
