import Foundation

/// What LMDB's lock file provides, done inside one process, for an
/// environment opened with `MDB_NOLOCK`.
///
/// Used where LMDB's own locks are unusable: on Apple platforms LMDB
/// 0.9.x (tannerdsilva/CLMDB) locks with named POSIX semaphores, which the
/// app sandbox refuses unless their names start with an app group (iOS,
/// tvOS, watchOS, visionOS, and sandboxed macOS apps; MediaStore.docc/ApplePlatforms.md).
///
/// LMDB's rule for `MDB_NOLOCK`: the caller enforces a single writer and
/// makes sure no reader uses an old snapshot while a writer is active (a
/// writer may reuse the pages that the last commit freed, which older
/// snapshots still show). So here a writer, once begun, waits until every
/// live read transaction of the process holds the newest committed
/// snapshot; readers begin under the same lock, so none slips in with an
/// older one unseen. Readers never wait. Other processes are kept out by
/// ``MaintenanceLock/sole(directory:)``.
final class ProcessLocalLocks: @unchecked Sendable {
    private let condition = NSCondition()
    private var writerActive = false
    /// Snapshot (LMDB transaction id) → live read transactions holding it.
    private var snapshots: [Int: Int] = [:]

    /// Runs `begin`, which starts or renews a read transaction and returns
    /// its snapshot (`nil` when it failed), with writers' checks held off,
    /// and records the snapshot.
    func beginReader(_ begin: () -> Int?) -> Int? {
        condition.lock()
        defer { condition.unlock() }
        guard let snapshot = begin() else { return nil }
        snapshots[snapshot, default: 0] += 1
        return snapshot
    }

    /// Forgets a read transaction that ended (reset, aborted or committed).
    func endReader(snapshot: Int) {
        condition.lock()
        if let count = snapshots[snapshot] { snapshots[snapshot] = count > 1 ? count - 1 : nil }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until no other write transaction is active, then takes its place.
    func beginWriter() {
        condition.lock()
        while writerActive { condition.wait() }
        writerActive = true
        condition.unlock()
    }

    /// Waits until every live reader holds snapshot `newest` or a newer one
    /// (called by the writer right after `mdb_txn_begin`, before it can
    /// touch a page).
    func waitForOlderReaders(newest: Int) {
        condition.lock()
        while snapshots.keys.contains(where: { $0 < newest }) { condition.wait() }
        condition.unlock()
    }

    /// Ends the active write transaction.
    func endWriter() {
        condition.lock()
        writerActive = false
        condition.broadcast()
        condition.unlock()
    }

    /// Live read transactions, for tests.
    var readerCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return snapshots.values.reduce(0, +)
    }
}
