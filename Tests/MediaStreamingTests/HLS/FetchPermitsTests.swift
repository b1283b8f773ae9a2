import Foundation
import MediaSupport
import Testing

@testable import MediaHLS

/// A run's fetch permits: at most their count held at once, each release
/// hands one to a waiter, and a holder's permit is given back once.
@Suite("HLS fetch permits", .timeLimit(.minutes(1)))
struct FetchPermitsTests {
    /// Waits (a bounded while) until `condition` holds.
    private func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
    }

    @Test("Two permits: waiters wait; each release hands one on, and a holder's permit is released once")
    func waitersInOrder() async throws {
        let permits = FetchPermits(2)
        await permits.acquire()
        let first = FetchPermit(permits)
        await permits.acquire()
        let second = FetchPermit(permits)
        let order = Locked<[Int]>([])
        let waiters = (1...3).map { index in
            Task {
                await permits.acquire()
                order.withLock { $0.append(index) }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.current == [], "a waiter got a permit while both were held")
        first.release()
        first.release()  // Once only: the second call gives nothing back.
        try await eventually { order.current.count >= 1 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(order.current.count == 1)
        second.release()
        try await eventually { order.current.count >= 2 }
        #expect(order.current.count == 2)
        permits.release()
        for waiter in waiters { await waiter.value }
        #expect(Set(order.current) == [1, 2, 3])
    }
}
