import Foundation

/// Gathers the writes that arrive while a commit is under way into one
/// group, so that the next commit (one transaction, one `fsync`) carries
/// them all.
///
/// A write joins; when no group is being committed it leads: it takes
/// every write queued so far (its own included, in arrival order) and
/// commits them. Writes that arrive meanwhile wait; when the leader
/// finishes, the first of them to wake leads the next group. A write
/// whose group was committed by another leader returns from ``join(_:)``
/// with `nil` once that commit has ended, so no write returns before the
/// commit that holds it.
///
/// Holds no store state: what a job is and how a group is committed is
/// the caller's.
// Unchecked: every stored property is guarded by `condition`.
final class WriteGroups<Job>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queued: [Job] = []
    /// Jobs numbered from 1 in arrival order: those up to `finished` are done.
    private var joined: UInt64 = 0
    private var finished: UInt64 = 0
    /// The last job of the group being committed; `nil` while none is.
    private var leading: UInt64?

    /// Writes queued for the next group (the group being committed not
    /// counted).
    var waiting: Int {
        condition.lock()
        defer { condition.unlock() }
        return queued.count
    }

    /// Queues `job` and waits. Returns the group to commit when the caller
    /// leads (then it must call ``finish()``), or `nil` once another
    /// leader has committed the group holding `job`.
    func join(_ job: Job) -> [Job]? {
        condition.lock()
        defer { condition.unlock() }
        joined += 1
        let number = joined
        queued.append(job)
        while leading != nil && finished < number {
            condition.wait()
        }
        guard finished < number else { return nil }
        leading = joined
        defer { queued = [] }
        return queued
    }

    /// Ends the group the caller led and wakes the writes waiting for it.
    func finish() {
        condition.lock()
        defer { condition.unlock() }
        if let leading { finished = leading }
        leading = nil
        condition.broadcast()
    }
}
