import TestSupport
import Testing

@testable import MediaSupport

/// The open-addressing table (the index of the memory tier and of the
/// access log): linear probing on crafted hashes (the low bits of a hash
/// pick its home bucket), removal by backward shift, growth.
@Suite struct SlotTableTests {
    /// Finds `slot` by `hash`, as the cache does: the matcher stands for
    /// the key comparison.
    func find(_ table: SlotTable, slot: Int, hash: Int) -> Int? {
        table.find(hash: hash) { $0 == slot }
    }

    @Test func collidingHashesProbeOnAndWrapAround() {
        var table = SlotTable()
        #expect(table.bucketCount == 8)
        // Home 7 for all three (the last bucket): the run wraps to 0 and 1.
        for slot in 0..<3 { table.insert(slot: slot, hash: 7 + slot << 40) }
        #expect(table.bucketSlots == [1, 2, -1, -1, -1, -1, -1, 0])
        for slot in 0..<3 { #expect(find(table, slot: slot, hash: 7 + slot << 40) == slot) }
        // Same home, no match: the probe stops at the empty bucket 2.
        #expect(find(table, slot: 9, hash: 7) == nil)
        #expect(table.inconsistency == nil)
    }

    @Test func removalShiftsTheRunBack() {
        var table = SlotTable()
        for slot in 0..<3 { table.insert(slot: slot, hash: 7) }
        table.remove(slot: 0, hash: 7)
        // Slots 1 and 2 move back one bucket each, to 7 and 0.
        #expect(table.bucketSlots == [2, -1, -1, -1, -1, -1, -1, 1])
        #expect(find(table, slot: 0, hash: 7) == nil)
        #expect(find(table, slot: 1, hash: 7) == 1)
        #expect(find(table, slot: 2, hash: 7) == 2)
        #expect(table.count == 2)
        #expect(table.inconsistency == nil)
    }

    @Test func removalLeavesAnEntryAtItsHome() {
        var table = SlotTable()
        table.insert(slot: 0, hash: 2)  // bucket 2
        table.insert(slot: 1, hash: 3)  // bucket 3, its home
        table.insert(slot: 2, hash: 2)  // bucket 4 (2 and 3 taken)
        table.remove(slot: 0, hash: 2)
        // Slot 1 cannot move before its home; slot 2 moves past it into 2.
        #expect(table.bucketSlots == [-1, -1, 2, 1, -1, -1, -1, -1])
        #expect(find(table, slot: 1, hash: 3) == 1)
        #expect(find(table, slot: 2, hash: 2) == 2)
        #expect(table.inconsistency == nil)
    }

    @Test func removalAcrossTheWrap() {
        var table = SlotTable()
        table.insert(slot: 0, hash: 6)  // bucket 6
        table.insert(slot: 1, hash: 7)  // bucket 7
        table.insert(slot: 2, hash: 6)  // bucket 0
        table.insert(slot: 3, hash: 0)  // bucket 1 (0 taken)
        table.remove(slot: 1, hash: 7)
        // Slot 2 (home 6) moves into 7, slot 3 (home 0) into 0.
        #expect(table.bucketSlots == [3, -1, -1, -1, -1, -1, 0, 2])
        for (slot, hash) in [(0, 6), (2, 6), (3, 0)] { #expect(find(table, slot: slot, hash: hash) == slot) }
        #expect(table.inconsistency == nil)
    }

    @Test func growthKeepsEveryEntryAndStaysHalfFull() {
        var table = SlotTable()
        // Many hashes share their low bits: long runs before and after growing.
        let hashes = (0..<200).map { $0 % 5 * 64 + $0 << 33 }
        for (slot, hash) in hashes.enumerated() {
            table.insert(slot: slot, hash: hash)
            #expect(table.count * 2 <= table.bucketCount)
        }
        #expect(table.bucketCount == 512)
        for (slot, hash) in hashes.enumerated() { #expect(find(table, slot: slot, hash: hash) == slot) }
        #expect(table.inconsistency == nil)
        table.removeAll()
        #expect(table.count == 0)
        #expect(find(table, slot: 0, hash: hashes[0]) == nil)
        #expect(table.inconsistency == nil)
    }

    @Test func randomOperationsMatchAModel() {
        var generator = SplitMix64(seed: 0x5107)
        var table = SlotTable()
        var model: [Int: Int] = [:]  // slot → hash
        for step in 0..<20_000 {
            if model.isEmpty || model.count < 40 && generator.next() % 3 != 0 {
                let slot = (0..<100).first { model[$0] == nil }!
                // Few distinct low bits, random high bits: collisions and long runs.
                let hash = Int(truncatingIfNeeded: generator.next() << 8 | generator.next() % 24)
                table.insert(slot: slot, hash: hash)
                model[slot] = hash
            } else {
                let slot = model.keys.sorted()[Int(generator.next() % UInt64(model.count))]
                table.remove(slot: slot, hash: model[slot]!)
                model[slot] = nil
            }
            if let problem = table.inconsistency {
                Issue.record("step \(step): \(problem)")
                return
            }
            #expect(table.count == model.count)
            for slot in 0..<100 {
                let found = model[slot].flatMap { find(table, slot: slot, hash: $0) }
                guard found == model[slot].map({ _ in slot }) else {
                    Issue.record("step \(step): slot \(slot) found as \(String(describing: found))")
                    return
                }
            }
        }
    }
}
