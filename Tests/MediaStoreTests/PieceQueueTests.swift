import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// How a parallel read hands its pieces to its threads
/// (``StoreTransaction/PieceQueue``): each piece once, in order, to
/// whichever thread asks first, and none after a bad chunk.
@Suite struct PieceQueueTests {
    @Test func handsOutEachPieceOnceInOrder() {
        let queue = StoreTransaction.PieceQueue(count: 3)
        #expect(queue.next() == 0)
        #expect(queue.next() == 1)
        #expect(queue.next() == 2)
        #expect(queue.next() == nil)
        #expect(queue.next() == nil)
        #expect(queue.failedChunk == nil)
        #expect(StoreTransaction.PieceQueue(count: 0).next() == nil)
    }

    /// Threads that ask at once share the pieces between them: every
    /// position handed out exactly once, none beyond the count.
    @Test func threadsAskingAtOnceGetEveryPieceOnce() {
        let count = 20_000
        let queue = StoreTransaction.PieceQueue(count: count)
        let taken = Locked<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            var mine: [Int] = []
            while let position = queue.next() { mine.append(position) }
            taken.withLock { $0 += mine }
        }
        #expect(taken.current.sorted() == Array(0..<count))
    }

    /// A bad chunk stops the hand-out; the lowest bad index is the one
    /// reported, whichever thread found it first.
    @Test func aBadChunkStopsTheHandOut() {
        let queue = StoreTransaction.PieceQueue(count: 10)
        #expect(queue.next() == 0)
        #expect(queue.next() == 1)
        queue.fail(7)
        #expect(queue.next() == nil)
        queue.fail(3)
        queue.fail(9)
        #expect(queue.failedChunk == 3)
        #expect(queue.next() == nil)
    }
}
