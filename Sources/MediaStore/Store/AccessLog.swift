import MediaSupport

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
///
/// Compaction remembers where each slot it kept stands, so each pair is
/// hashed once: the next compaction, or ``latest()``, looks up only the
/// pairs noted since (none, right after the compaction that scheduled a
/// background flush: ``latest()`` then only sorts). Where each stands is
/// a ``SlotTable`` on ``Slot/tableHash``: a `Dictionary` seeded and
/// finalized a `Hasher` per pair and rehashed every pair as it grew,
/// about a tenth of a random get among a million entries.
struct AccessLog {
    private var reads: [(slot: Slot, time: Double)] = []
    /// The pairs before it hold each slot once (compaction made it so).
    private var compacted = 0
    /// The index in `reads` of each slot of the compacted pairs.
    private var position = SlotTable()
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
    /// the next compaction comes once the log has doubled. Only the pairs
    /// noted since the last compaction are looked up.
    mutating func compact() {
        guard compacted < reads.count else { return }
        var kept = compacted
        for index in compacted..<reads.count {
            let read = reads[index]
            let hash = read.slot.tableHash
            if let earlier = position.find(hash: hash, where: { reads[$0].slot == read.slot }) {
                reads[earlier].time = max(reads[earlier].time, read.time)
            } else {
                position.insert(slot: kept, hash: hash)
                reads[kept] = read
                kept += 1
            }
        }
        reads.removeSubrange(kept...)
        compacted = kept
        compactAt = max(compactAt, 2 * kept)
    }

    /// The latest time of each slot, oldest first (ties in slot order, so
    /// the result does not depend on the order the reads were noted in).
    func latest() -> [(slot: Slot, time: Double)] {
        var log = self
        log.compact()
        return log.reads.sorted { a, b in
            a.time != b.time ? a.time < b.time : a.slot.bytes.lexicographicallyPrecedes(b.slot.bytes)
        }
    }
}
