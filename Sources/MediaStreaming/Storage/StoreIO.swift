import Dispatch
import MediaStore
import MediaSupport

/// Runs the blocking calls of a `MediaStore` on dispatch queues of their
/// own, so that no thread of the Swift concurrency pool waits on LMDB's
/// writer lock or on an `fsync`.
///
/// Writes go to one serial queue (they serialize on the store's writer
/// lock anyway, so one thread waits instead of several); reads go to a
/// concurrent queue, so that a reader planning its next bytes never waits
/// behind a commit. Each call is one short store transaction: the body
/// runs to completion on the queue and nothing is held across an `await`.
/// Failures keep their type (`StoreError`).
///
/// A write that needs no order with the others (it publishes what its
/// caller alone wrote, as an HLS segment's sink does) may go to
/// ``writeBeside(_:)`` instead: a few serial lanes beside the write
/// queue, the least busy taken, so that up to ``laneCount`` such writes wait on
/// the store at once and share its commits (the store's group commit:
/// one `fsync` for all the writes that arrived during the previous
/// commit). A write still returns only after the commit that holds it.
package struct StoreIO: Sendable {
    /// Which of its queues the current code runs on ("reads", "writes"),
    /// for checks that a call left the concurrency pool.
    static let queueRole = DispatchSpecificKey<String>()

    /// The store the calls go to.
    package let store: MediaStore
    private let reads: DispatchQueue
    private let writes: DispatchQueue
    /// The lanes of ``writeBeside(_:)`` (each serial: a thread at most each).
    private let lanes: [DispatchQueue]
    /// The ``writeBeside(_:)`` calls queued or running on each lane.
    private let laneLoads = Locked([Int](repeating: 0, count: laneCount))
    /// How many ``writeBeside(_:)`` calls run at once at most (an HLS
    /// download's default 4 fetches, and as many publishing).
    package static let laneCount = 8

    init(store: MediaStore) {
        self.store = store
        reads = DispatchQueue(label: "MediaStreaming.StoreIO.reads", qos: .userInitiated, attributes: .concurrent)
        writes = DispatchQueue(label: "MediaStreaming.StoreIO.writes", qos: .userInitiated)
        lanes = (0..<Self.laneCount).map {
            DispatchQueue(label: "MediaStreaming.StoreIO.lane\($0)", qos: .userInitiated)
        }
        reads.setSpecific(key: Self.queueRole, value: "reads")
        writes.setSpecific(key: Self.queueRole, value: "writes")
        for lane in lanes { lane.setSpecific(key: Self.queueRole, value: "writes") }
    }

    /// Runs a read-only store call off the concurrency pool.
    package func read<T: Sendable>(_ body: @escaping @Sendable (MediaStore) throws(StoreError) -> T)
        async throws(StoreError)
        -> T
    {
        try await perform(on: reads, body)
    }

    /// Runs a store call that writes (a write transaction) off the concurrency pool.
    package func write<T: Sendable>(_ body: @escaping @Sendable (MediaStore) throws(StoreError) -> T)
        async throws(StoreError)
        -> T
    {
        try await perform(on: writes, body)
    }

    /// Runs a store call that writes, off the concurrency pool, on one of
    /// the lanes beside the write queue: not ordered after the writes
    /// queued before it (only after those its caller awaited), so use it
    /// only for a write whose outcome does not depend on another caller's
    /// (a write that publishes what its caller alone wrote). Such writes
    /// that overlap share the store's commits.
    package func writeBeside<T: Sendable>(_ body: @escaping @Sendable (MediaStore) throws(StoreError) -> T)
        async throws(StoreError)
        -> T
    {
        // The least busy lane: a write queued behind one that leads a
        // commit could not join the group committed next.
        let index = laneLoads.withLock { loads in
            let index = loads.indices.min { loads[$0] < loads[$1] } ?? 0
            loads[index] += 1
            return index
        }
        defer { laneLoads.withLock { $0[index] -= 1 } }
        return try await perform(on: lanes[index], body)
    }

    private func perform<T: Sendable>(
        on queue: DispatchQueue, _ body: @escaping @Sendable (MediaStore) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        let store = self.store
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<T, StoreError>, Never>) in
            queue.async {
                do throws(StoreError) {
                    continuation.resume(returning: .success(try body(store)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }
}
