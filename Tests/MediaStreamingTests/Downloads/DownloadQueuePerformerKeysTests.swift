import Dispatch
import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// A performer's ``DownloadPerformer/keys(of:in:)`` may read the store (the
/// HLS performer lists the asset's entries: a read transaction over every
/// entry). The queue asked for them on its own executor, which a slow
/// store read then held: no other call of the queue ran meanwhile.
@Suite("Download queue: a performer's keys, off the queue's executor", .timeLimit(.minutes(1)))
struct DownloadQueuePerformerKeysTests {
    /// Runs until stopped; its keys, once armed, block until the test
    /// releases them (as long as a slow store read), at most 5 s.
    struct BlockingKeysPerformer: UntilCancelledPerformer {
        static let kind = "blocking-keys"
        let probe = KeysProbe()

        func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] {
            probe.block()
            return [record.cacheKey]
        }
    }

    /// Where and how long the armed ``BlockingKeysPerformer/keys(of:in:)`` ran.
    final class KeysProbe: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = false
        private var asked: CheckedContinuation<Void, Never>?
        private let released = DispatchSemaphore(value: 0)
        /// The StoreIO queue it ran on (nil: none, e.g. an actor's executor).
        private(set) var role: String?
        /// Whether it gave up waiting for ``release()``.
        private(set) var timedOut = false

        /// The next call blocks; returns once it has been made.
        func arm(then body: @escaping @Sendable () -> Void) async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.withLock {
                    armed = true
                    asked = continuation
                }
                body()
            }
        }

        func block() {
            let continuation = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                guard armed else { return nil }
                armed = false
                defer { asked = nil }
                return asked
            }
            guard let continuation else { return }
            let role = DispatchQueue.getSpecific(key: StoreIO.queueRole)
            continuation.resume()
            let outcome = released.wait(timeout: .now() + 5)
            lock.withLock {
                self.role = role
                timedOut = outcome == .timedOut
            }
        }

        func release() { released.signal() }
    }

    @Test("While a performer's keys are read, the queue answers another call")
    func keysAreReadOffTheQueue() async throws {
        let test = try TestCache()
        let performer = BlockingKeysPerformer()
        let queue = try await DownloadQueue.open(cache: test.cache, performers: [performer])
        let record = try await queue.enqueue(
            URL(string: "https://example.invalid/blocking-keys")!, kind: BlockingKeysPerformer.kind)
        // A stop pins the download's entries: it asks for its keys.
        let stopping = Locked<Task<Void, any Error>?>(nil)
        await performer.probe.arm { stopping.withLock { $0 = Task { try await queue.stop(record.id) } } }
        let answer = await queue.download(record.id)
        performer.probe.release()
        try await stopping.current?.value
        #expect(!performer.probe.timedOut, "the queue answered nothing while the keys were read")
        #expect(performer.probe.role == "reads")
        #expect(answer?.status == .stopped(.user))
        #expect(await queue.download(record.id)?.status == .stopped(.user))
    }
}
