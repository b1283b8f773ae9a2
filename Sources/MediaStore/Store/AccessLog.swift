/// The reads of entries not yet written to the index: which slot was
/// read when, in the order they were noted.
///
/// A read appends one pair (no hashing, no lookup: it is on every read's
/// path); the write that applies them asks for ``latest()``, the last time
/// of each slot, off the readers' path.
struct AccessLog {
    private var reads: [(slot: Slot, time: Double)] = []

    /// - parameter capacity: reads noted before the log grows.
    init(capacity: Int = 0) {
        reads.reserveCapacity(capacity)
    }

    /// How many reads were noted (a slot read twice counts twice).
    var count: Int { reads.count }

    var isEmpty: Bool { reads.isEmpty }

    /// Notes a read of `slot` at `time` (seconds since 1970).
    mutating func note(_ slot: Slot, at time: Double) {
        reads.append((slot, time))
    }

    /// Notes every read of `other` too (the reads a failed write took out).
    mutating func merge(_ other: AccessLog) {
        reads.append(contentsOf: other.reads)
    }

    /// The latest time of each slot, oldest first (ties in slot order, so
    /// the result does not depend on the order the reads were noted in).
    func latest() -> [(slot: Slot, time: Double)] {
        var last: [Slot: Double] = [:]
        last.reserveCapacity(reads.count)
        for (slot, time) in reads where last[slot].map({ $0 < time }) ?? true { last[slot] = time }
        return last.map { (slot: $0.key, time: $0.value) }.sorted { a, b in
            a.time != b.time ? a.time < b.time : a.slot.bytes.lexicographicallyPrecedes(b.slot.bytes)
        }
    }
}
