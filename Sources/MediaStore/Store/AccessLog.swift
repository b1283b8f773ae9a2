/// The reads of entries not yet written to the index: which slot was
/// read when.
///
/// A read appends one pair (no hashing, no lookup: it is on every read's
/// path), or updates the last pair when it read the same slot again (a
/// stream reads one entry slice after slice). Past a threshold the log is
/// compacted to one pair per slot, so it holds at most about twice as
/// many pairs as slots, however many reads a long write or a failing
/// flush makes it wait for. The write that applies the log asks for
/// ``latest()``, the last time of each slot, off the readers' path.
struct AccessLog {
    private var reads: [(slot: Slot, time: Double)] = []
    /// The count at which ``note(_:at:)`` compacts.
    private var compactAt: Int

    /// - parameter capacity: reads noted before the log first compacts.
    init(capacity: Int = 0) {
        reads.reserveCapacity(capacity)
        compactAt = max(capacity, 64)
    }

    /// Pairs held: at least the number of slots read, at most about twice
    /// that (or the capacity).
    var count: Int { reads.count }

    var isEmpty: Bool { reads.isEmpty }

    /// Notes a read of `slot` at `time` (seconds since 1970).
    mutating func note(_ slot: Slot, at time: Double) {
        if let last = reads.last, last.slot == slot {
            reads[reads.count - 1].time = max(last.time, time)
            return
        }
        reads.append((slot, time))
        if reads.count >= compactAt { compact() }
    }

    /// Notes every read of `other` too (the reads a failed write took out).
    mutating func merge(_ other: AccessLog) {
        reads.append(contentsOf: other.reads)
        if reads.count >= compactAt { compact() }
    }

    /// Keeps one pair per slot, with its latest time, in first-read order;
    /// the next compaction comes once the log has doubled.
    mutating func compact() {
        var position: [Slot: Int] = [:]
        position.reserveCapacity(reads.count)
        var kept: [(slot: Slot, time: Double)] = []
        kept.reserveCapacity(reads.count)
        for read in reads {
            if let index = position[read.slot] {
                kept[index].time = max(kept[index].time, read.time)
            } else {
                position[read.slot] = kept.count
                kept.append(read)
            }
        }
        reads = kept
        compactAt = max(compactAt, 2 * kept.count)
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
