import Foundation

/// One write waiting in a group: its body, and how it failed, if it did.
///
/// The body is the caller's closure (made escapable only while the caller
/// waits in ``MediaStore/write(_:)``); the leader drops it before the
/// group ends, so that it never outlives that call.
// Unchecked: the leader sets `body` and `failure` before it ends the group
// (`WriteGroups.finish()`), and the writer reads them only after that.
final class PendingWrite: @unchecked Sendable {
    var body: ((StoreTransaction) throws -> Void)?
    var failure: (any Error)?

    init(body: @escaping (StoreTransaction) throws -> Void) {
        self.body = body
    }
}

extension MediaStore {
    /// Runs `body` in the write transaction, then applies pending access
    /// times and the limits, and commits; returns once that commit has
    /// ended. On `MDB_MAP_FULL` the map grows and `body` runs again, so
    /// `body` must only change the transaction.
    ///
    /// Group commit: writes that arrive while another write commits wait,
    /// and the next commit carries all of them (their bodies run one after
    /// another in one transaction, in arrival order), so they share one
    /// `fsync`. A body that throws takes only its own write down: the
    /// transaction is abandoned and the others run again without it.
    func write<R>(_ body: (StoreTransaction) throws -> R) throws -> R {
        guard !isReadOnly else { throw StoreError.readOnly }
        return try withoutActuallyEscaping(body) { body in
            var result: R?
            let job = PendingWrite { transaction in result = try body(transaction) }
            if let group = writeGroups.join(job) {
                commit(group)
                writeGroups.finish()
            }
            if let failure = job.failure { throw failure }
            guard let result else { preconditionFailure("a write's group ended without running it") }
            return result
        }
    }

    /// Commits one group of writes under the writer lock, recording each
    /// write's failure in its job, and drops every body before returning.
    private func commit(_ group: [PendingWrite]) {
        writerLock.lock()
        defer { writerLock.unlock() }
        defer { for job in group { job.body = nil } }
        guard closeStateValue != .closed else {
            for job in group { job.failure = StoreError.closed }
            return
        }
        // The pending access times are taken out (readers go on filling a
        // fresh dictionary, instead of copying this one on their next
        // insert) and put back, unless newer, when the commit fails.
        let pending = pendingAccess.withLock { current in
            defer { current = AccessLog(capacity: Self.accessBatchSize) }
            return current
        }
        var applied = false
        defer { if !applied && !pending.isEmpty { restoreAccessTimes(pending) } }
        var members = group
        var attempt = 0
        while !members.isEmpty {
            do {
                let transaction = try StoreTransaction(
                    environment: environment, databases: databases, context: engine, write: true)
                defer { transaction.abort() }
                if let failed = try Self.runBodies(of: members, in: transaction) {
                    members.remove(at: failed)
                    continue
                }
                try transaction.applyAccessTimes(pending)
                try transaction.enforceLimits()
                try transaction.commit()
                applied = true
                if !transaction.removals.isEmpty {
                    for observer in removalObservers.withLock({ Array($0.observers.values) }) {
                        observer(transaction.removals)
                    }
                }
                return
            } catch let error as LMDBError where error == .mapFull && attempt < 16 {
                attempt += 1
                let current = environment.mapSize
                do {
                    try environment.growMap(minimum: current + max(current, 64 << 20))
                } catch {
                    for job in members { job.failure = error }
                    return
                }
            } catch {
                for job in members { job.failure = error }
                return
            }
        }
    }

    /// Runs the bodies in order. Returns the index of the first that threw
    /// (its failure recorded; the transaction must be abandoned), or `nil`
    /// when all ran. A full map is thrown: every body runs again.
    private static func runBodies(of members: [PendingWrite], in transaction: StoreTransaction) throws -> Int? {
        for (index, job) in members.enumerated() {
            do {
                try job.body?(transaction)
            } catch let error as LMDBError where error == .mapFull {
                throw error
            } catch {
                job.failure = error
                return index
            }
        }
        return nil
    }
}
