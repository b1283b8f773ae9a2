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

    /// A compacted log holds each slot once and keeps where each stands:
    /// reads noted after the compaction (of slots it kept, at older and
    /// newer times, of new slots, merged from another log) still give the
    /// latest time of each slot, before and after the next compaction.
    @Test func theLatestTimesStayRightAfterACompactionAndMoreReads() {
        var log = AccessLog()  // compacts at 64 pairs
        var expected: [Slot: Double] = [:]
        func check(count: Int, _ comment: Comment) {
            #expect(log.count == count, comment)
            let latest = log.latest()
            #expect(Dictionary(latest.map { ($0.slot, $0.time) }, uniquingKeysWith: max) == expected, comment)
            #expect(latest.count == expected.count, comment)
            #expect(latest.map(\.time) == latest.map(\.time).sorted(), comment)
            #expect(log.count == count, "latest() changed the log")
        }
        let slots = (0..<60).map { Slot(ContentDigest(high: UInt64($0), low: 7), ordinal: UInt16($0 % 3)) }
        func heard(_ slot: Int, at time: Double) { expected[slots[slot]] = max(expected[slots[slot]] ?? time, time) }
        func note(_ slot: Int, at time: Double) {
            log.note(slots[slot], at: time)
            heard(slot, at: time)
        }
        // 40 slots, then the first 24 again (not in a row): compacted at the 64th.
        for read in 0..<64 { note(read % 40, at: Double(read)) }
        check(count: 40, "just compacted")
        note(5, at: 1)  // older than its compacted time
        note(30, at: 100)  // newer
        note(30, at: 99)  // the same slot in a row: one pair
        note(45, at: 50)  // new
        note(3, at: 101)
        note(45, at: 2)
        check(count: 45, "compacted, then more reads")
        var other = AccessLog()
        for (slot, time) in [(7, 200.0), (46, 0), (8, 3)] {
            other.note(slots[slot], at: time)
            heard(slot, at: time)
        }
        log.merge(other)
        check(count: 48, "merged")
        // On to 80 pairs: compacted again (60 slots).
        for read in 0..<32 { note(59 - read % 20, at: Double(300 - read)) }
        check(count: 60, "compacted twice")
    }
}
