import Testing

@testable import MediaStore

/// The log of reads not yet written: every read appends, the applying
/// write gets the latest time of each slot, oldest first.
@Suite struct AccessLogTests {
    let a = Slot(ContentDigest(high: 1, low: 1), ordinal: 0)
    let b = Slot(ContentDigest(high: 2, low: 2), ordinal: 0)
    let c = Slot(ContentDigest(high: 1, low: 1), ordinal: 1)

    @Test func theLatestTimeOfEachSlotWinsOldestFirst() {
        var log = AccessLog()
        #expect(log.isEmpty)
        log.note(a, at: 5)
        log.note(b, at: 3)
        log.note(a, at: 2)  // an older read noted later (another thread's clock)
        log.note(c, at: 4)
        log.note(b, at: 7)
        #expect(log.count == 5)
        let latest = log.latest()
        #expect(latest.map(\.slot) == [c, a, b])
        #expect(latest.map(\.time) == [4, 5, 7])
    }

    @Test func mergingInEitherOrderGivesTheSameResult() {
        var first = AccessLog()
        first.note(a, at: 1)
        first.note(b, at: 9)
        var second = AccessLog(capacity: 16)
        second.note(a, at: 6)
        second.note(c, at: 6)
        var one = first
        one.merge(second)
        var other = second
        other.merge(first)
        #expect(one.count == 4 && other.count == 4)
        #expect(one.latest().map(\.slot) == other.latest().map(\.slot))
        #expect(one.latest().map(\.time) == [6, 6, 9])
        // A tie is broken by the slot's bytes: `a` before `c`.
        #expect(one.latest().map(\.slot) == [a, c, b])
    }

    @Test func readsOfTheSameSlotInARowKeepOnePair() {
        var log = AccessLog()
        for time in 0..<1_000 { log.note(a, at: Double(time)) }
        #expect(log.count == 1)
        log.note(a, at: 3)  // an older time never replaces a newer one
        #expect(log.latest().map(\.time) == [999])
    }

    @Test func theLogStaysWithinTwiceTheSlotsItHolds() {
        var log = AccessLog(capacity: 100)
        let slots = (0..<10).map { Slot(ContentDigest(high: UInt64($0), low: 0), ordinal: 0) }
        for read in 0..<100_000 { log.note(slots[read % slots.count], at: Double(read)) }
        #expect(log.count <= 100)
        #expect(log.latest().count == 10)
        #expect(log.latest().last?.time == 99_999)
        var many = AccessLog(capacity: 100)
        for read in 0..<5_000 {
            many.note(Slot(ContentDigest(high: UInt64(read % 1_000), low: 1), ordinal: 0), at: Double(read))
        }
        #expect(many.count <= 2_000)
        #expect(many.latest().count == 1_000)
        #expect(many.latest().first?.time == 4_000)
    }
}
