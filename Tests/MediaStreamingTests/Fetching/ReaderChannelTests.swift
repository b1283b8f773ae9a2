import Dispatch
import Foundation
import Testing

@testable import MediaStreaming

/// The reader channel's count of backlog changes, which the fetcher sums
/// into `StreamingStatistics.readerBacklogBytes` and its peak.
@Suite("Reader channel", .timeLimit(.minutes(1)))
struct ReaderChannelTests {
    /// The changes told to the counters, in the order they arrive, and the peak of their sum.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var sum = 0
        private var highest = 0
        /// Opened when the reader starts telling of a taken piece.
        let readerTelling = DispatchSemaphore(value: 0)
        /// Opened when the download is about to send (it may then wait for the channel's lock).
        let sending = DispatchSemaphore(value: 0)
        /// Opened once the download's two sends are done.
        let sendsDone = DispatchSemaphore(value: 0)
        private var heldReader = false

        var peak: Int { lock.withLock { highest } }
        var total: Int { lock.withLock { sum } }

        func change(_ delta: Int) {
            let hold = lock.withLock {
                defer { if delta < 0 { heldReader = true } }
                return delta < 0 && !heldReader
            }
            if hold {
                // The reader is slow to tell of the piece it took (a busy machine
                // preempted it right after the take): the download may send meanwhile.
                // (It blocks the task's thread, briefly: the download either
                // sends meanwhile or waits for the channel's lock.)
                readerTelling.signal()
                _ = sending.wait(timeout: .now() + .seconds(10))
                _ = sendsDone.wait(timeout: .now() + .milliseconds(100))
            }
            lock.withLock {
                sum += delta
                highest = max(highest, sum)
            }
        }
    }

    @Test("The summed backlog never counts bytes that were not queued at once, however the threads interleave")
    func backlogChangesArriveInOrder() async throws {
        let counter = Counter()
        let channel = ReaderChannel { counter.change($0) }
        let piece = Data(count: 1_000)
        for _ in 0..<4 { channel.send(piece) }
        #expect(channel.backlog == 4_000)
        // The reader takes one piece (4 000 -> 3 000); while it is telling of
        // it, the download sends twice (-> 4 000 -> 5 000) from another thread.
        let sender = Task.detached {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                DispatchQueue.global().async {
                    counter.readerTelling.wait()
                    counter.sending.signal()
                    channel.send(piece)
                    channel.send(piece)
                    counter.sendsDone.signal()
                    done.resume()
                }
            }
        }
        let taken = try await channel.next()
        #expect(taken?.count == 1_000)
        await sender.value
        #expect(channel.backlog == 5_000)
        #expect(counter.total == 5_000)
        // The backlog was never more than 5 000 bytes: a peak of 6 000 is
        // the reader's − told after the download's later +.
        #expect(counter.peak == 5_000, "peak \(counter.peak) of a backlog that never exceeded 5000")
        // Closing drops the rest, told once.
        channel.close()
        #expect(counter.total == 0)
    }
}
