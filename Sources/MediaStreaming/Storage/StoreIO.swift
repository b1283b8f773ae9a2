import Dispatch
import MediaStore

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
package struct StoreIO: Sendable {
    /// Which of its queues the current code runs on ("reads", "writes"),
    /// for checks that a call left the concurrency pool.
    static let queueRole = DispatchSpecificKey<String>()

    /// The store the calls go to.
    package let store: MediaStore
    private let reads: DispatchQueue
    private let writes: DispatchQueue

    init(store: MediaStore) {
        self.store = store
        reads = DispatchQueue(label: "MediaStreaming.StoreIO.reads", qos: .userInitiated, attributes: .concurrent)
        writes = DispatchQueue(label: "MediaStreaming.StoreIO.writes", qos: .userInitiated)
        reads.setSpecific(key: Self.queueRole, value: "reads")
        writes.setSpecific(key: Self.queueRole, value: "writes")
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
