import Foundation
import Testing

@testable import MediaSupport

/// Values set on a target that calls back synchronously: in order, newest
/// last, and without deadlock when the callback offers another value.
@Suite("Ordered applier", .timeLimit(.minutes(1)))
struct OrderedApplierTests {
    /// Runs `body` on a thread of its own; false if it has not returned
    /// within `seconds` (the thread is then left blocked).
    private func returnsInTime(seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        Thread {
            body()
            done.signal()
        }.start()
        return done.wait(timeout: .now() + seconds) == .success
    }

    @Test("A value offered from inside apply, on the applying thread, is applied after it without deadlock")
    func reentrantOfferIsAppliedAfterTheCurrentOne() {
        let seen = Locked<[Int]>([])
        let box = Locked<OrderedApplier<Int>?>(nil)
        let applier = OrderedApplier<Int> { value in
            seen.withLock { $0.append(value) }
            // An observer that reacts to the first value with a change of
            // its own, as a KVO observer of `Progress` that pauses a download.
            if value == 1 { box.current?.offer(2, number: 2) }
            // The observer's change must not be applied inside this call.
            if value == 1 { #expect(seen.current == [1]) }
        }
        box.withLock { $0 = applier }
        let returned = returnsInTime(seconds: 5) { applier.offer(1, number: 1) }
        #expect(returned, "a re-entrant offer deadlocked")
        #expect(seen.current == [1, 2])
        box.withLock { $0 = nil }
    }

    @Test("An older value offered after a newer one is dropped")
    func olderValueIsDropped() {
        let seen = Locked<[Int]>([])
        let applier = OrderedApplier<Int> { value in seen.withLock { $0.append(value) } }
        applier.offer(5, number: 5)
        applier.offer(3, number: 3)
        applier.offer(6, number: 6)
        #expect(seen.current == [5, 6])
    }

    @Test(
        "Offers from many threads: applied one at a time, numbers increasing, each offer returns after its value or a newer one"
    )
    func concurrentOffersApplyInOrder() async {
        let log = Locked<(applied: [UInt64], inside: Int, overlap: Bool)>(([], 0, false))
        let applier = OrderedApplier<UInt64> { number in
            log.withLock {
                $0.inside += 1
                if $0.inside > 1 { $0.overlap = true }
            }
            // A slow observer, so offers pile up behind it.
            if number % 7 == 0 { usleep(200) }
            log.withLock {
                $0.applied.append(number)
                $0.inside -= 1
            }
        }
        let counter = Locked<UInt64>(0)
        let late = Locked<[UInt64]>([])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<200 {
                        // Numbered in the order read, as the callers do under their lock.
                        let number = counter.withLock {
                            $0 += 1
                            return $0
                        }
                        applier.offer(number, number: number)
                        let newest = log.withLock { $0.applied.last ?? 0 }
                        if newest < number { late.withLock { $0.append(number) } }
                    }
                }
            }
        }
        let (applied, _, overlap) = log.current
        #expect(!overlap, "two values were applied at once")
        #expect(applied == applied.sorted() && Set(applied).count == applied.count, "not in increasing order")
        #expect(applied.last == 1600, "the newest value was not applied last")
        #expect(late.current.isEmpty, "offers returned before their value was applied: \(late.current.prefix(5))")
    }
}
