/// An open-addressing hash table from a key's precomputed hash to the
/// slot (an index into the caller's storage) that holds the key: the index
/// of MediaCache's memory tier (`LRUCache`), and of the pending access
/// times (MediaStore's `AccessLog`).
///
/// A Swift `Dictionary` keyed by the hash-carrying key seeds and finalizes
/// a `Hasher` on every lookup, insert and removal; a read that misses the
/// memory tier, then fills it and evicts its oldest entry, paid that three
/// times. Here the hash is used as it is: linear probing over a
/// power-of-two array of buckets, never more than half full. Each bucket
/// holds a slot and the low 32 bits of its key's hash, so probing past
/// other keys compares integers only, growing needs no key, and removing a
/// slot needs only its hash (found by its slot, without comparing keys).
/// Removal shifts the entries after it back (no tombstones), so a lookup
/// stops at the first empty bucket.
///
/// The keys live with the slots: ``find(hash:where:)`` asks the caller
/// whether a slot holds the key.
@usableFromInline
package struct SlotTable {
    @usableFromInline
    package struct Bucket: Sendable {
        /// `-1`: empty.
        @usableFromInline var slot: Int32
        /// The low 32 bits of the hash; its low bits are the home bucket.
        @usableFromInline var tag: UInt32

        @inlinable
        init(slot: Int32, tag: UInt32) {
            self.slot = slot
            self.tag = tag
        }

        @usableFromInline static let empty = Bucket(slot: -1, tag: 0)
    }

    /// A power of two, at least twice ``count``.
    @usableFromInline var buckets: [Bucket]
    /// Slots held.
    @usableFromInline package private(set) var count = 0

    @usableFromInline static let minimumCapacity = 8

    @inlinable
    package init() {
        buckets = Array(repeating: .empty, count: Self.minimumCapacity)
    }

    @inlinable
    static func tag(_ hash: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: hash)
    }

    /// The slot whose hash is `hash` and for which `matches` is true, if any.
    @inlinable
    package func find(hash: Int, where matches: (Int) -> Bool) -> Int? {
        let tag = Self.tag(hash)
        let mask = buckets.count - 1
        var index = Int(tag) & mask
        while true {
            let bucket = buckets[index]
            if bucket.slot < 0 { return nil }
            if bucket.tag == tag && matches(Int(bucket.slot)) { return Int(bucket.slot) }
            index = (index &+ 1) & mask
        }
    }

    /// Adds `slot` under `hash`. The caller makes sure no slot holds the
    /// same key (``find(hash:where:)`` missed).
    @inlinable
    package mutating func insert(slot: Int, hash: Int) {
        precondition(slot >= 0 && slot <= Int(Int32.max), "slot out of range")
        if (count + 1) * 2 > buckets.count { grow() }
        Self.place(Bucket(slot: Int32(slot), tag: Self.tag(hash)), in: &buckets)
        count += 1
    }

    /// Removes `slot`, added under `hash`.
    @inlinable
    package mutating func remove(slot: Int, hash: Int) {
        let mask = buckets.count - 1
        var hole = Int(Self.tag(hash)) & mask
        while buckets[hole].slot != Int32(truncatingIfNeeded: slot) {
            precondition(buckets[hole].slot >= 0, "slot not in the table")
            hole = (hole &+ 1) & mask
        }
        // Backward shift: each later entry of the run that may sit in the
        // hole (its home is not between the hole and it) moves into it,
        // leaving its own bucket as the next hole.
        var index = hole
        while true {
            index = (index &+ 1) & mask
            let bucket = buckets[index]
            if bucket.slot < 0 { break }
            let home = Int(bucket.tag) & mask
            if (index &- home) & mask >= (index &- hole) & mask {
                buckets[hole] = bucket
                hole = index
            }
        }
        buckets[hole] = .empty
        count -= 1
    }

    /// Empties the table, keeping its capacity.
    @inlinable
    package mutating func removeAll() {
        for index in buckets.indices { buckets[index] = .empty }
        count = 0
    }

    @inlinable
    static func place(_ bucket: Bucket, in buckets: inout [Bucket]) {
        let mask = buckets.count - 1
        var index = Int(bucket.tag) & mask
        while buckets[index].slot >= 0 { index = (index &+ 1) & mask }
        buckets[index] = bucket
    }

    @usableFromInline
    mutating func grow() {
        // Homes come from the tags: 32 bits address up to 2^32 buckets.
        precondition(UInt64(buckets.count) < 1 << 32, "table too large")
        var grown = [Bucket](repeating: .empty, count: buckets.count * 2)
        for bucket in buckets where bucket.slot >= 0 { Self.place(bucket, in: &grown) }
        buckets = grown
    }

    /// The number of buckets (at least twice the entries), for checks.
    package var bucketCount: Int { buckets.count }

    /// The buckets' slots in bucket order (`-1`: empty), for checks.
    package var bucketSlots: [Int] { buckets.map { Int($0.slot) } }

    /// Why the table is inconsistent, or `nil`: every entry is reachable
    /// from its home bucket without crossing an empty one, ``count``
    /// counts the entries, no slot is held twice and the table is at most
    /// half full.
    package var inconsistency: String? {
        let mask = buckets.count - 1
        guard buckets.count >= Self.minimumCapacity, buckets.count & mask == 0 else {
            return "capacity \(buckets.count) is not a power of two ≥ \(Self.minimumCapacity)"
        }
        var seen = Set<Int32>()
        for (index, bucket) in buckets.enumerated() where bucket.slot >= 0 {
            guard seen.insert(bucket.slot).inserted else { return "slot \(bucket.slot) held twice" }
            var probe = Int(bucket.tag) & mask
            while probe != index {
                if buckets[probe].slot < 0 { return "slot \(bucket.slot) at \(index) unreachable from \(probe)" }
                probe = (probe + 1) & mask
            }
        }
        if seen.count != count { return "count \(count), \(seen.count) entries" }
        if count * 2 > buckets.count { return "\(count) entries in \(buckets.count) buckets" }
        return nil
    }
}
