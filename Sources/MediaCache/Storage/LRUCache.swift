import Foundation
import MediaStore
import MediaSupport

/// A least-recently-used map with exact count and cost limits. Values are
/// untyped so that every transformed view of a storage shares one memory
/// tier. Thread-safe.
///
/// Built for the read path, where a disk hit inserts into a full tier: the
/// entries live in one array of slots threaded on a doubly linked list of
/// indices (most recent at the head), and evicted slots are reused by
/// later inserts without allocating; all state is one struct, so a call
/// pays one exclusivity check instead of one per field; keys carry their
/// hash (a ``HashedKey``), so a read that misses, then inserts and evicts,
/// hashes its key's bytes once instead of three times; the index is a
/// ``SlotTable`` that uses that hash as it is (a `Dictionary` seeded and
/// finalized a `Hasher` on each of those three steps) and finds an evicted
/// slot's bucket by the slot, without comparing keys; and the calls a read
/// makes are `@inlinable`, so a client module specializes them for its key
/// type instead of running generic code through witness tables.
@usableFromInline
final class LRUCache<Key: Hashable> {
    @usableFromInline
    struct Capsule {
        @usableFromInline var object: Any
        /// `nil`: never expires.
        @usableFromInline var expiry: Date?
        @usableFromInline var cost: Int

        @inlinable
        init(object: Any, expiry: Date?, cost: Int) {
            self.object = object
            self.expiry = expiry
            self.cost = cost
        }

        @inlinable
        func isExpired(at now: Date) -> Bool {
            guard let expiry else { return false }
            return expiry <= now
        }
    }

    /// A key with its hash computed once (with the process's seed): the
    /// index uses that integer as it is, and equal hashes are confirmed by
    /// comparing the keys.
    @usableFromInline
    struct HashedKey: Hashable {
        @usableFromInline let key: Key
        @usableFromInline let hash: Int

        @inlinable
        init(_ key: Key) {
            self.key = key
            self.hash = Self.hash(of: key)
        }

        /// A key with a hash already known (a stored link's, or one a
        /// check chooses to force collisions).
        init(_ key: Key, hash: Int) {
            self.key = key
            self.hash = hash
        }

        /// String and Substring keys by their bytes, as the disk tier (`ExactKey`).
        @inlinable
        static func hash(of key: Key) -> Int {
            if Key.self == String.self { return ExactKey.hash(of: key as! String) }
            if Key.self == Substring.self { return ExactKey.hash(of: key as! Substring) }
            return key.hashValue
        }

        /// Whether two keys are one key: String and Substring keys when
        /// their bytes are equal (the disk tier stores other keys by
        /// `KeyCoder.encode`, and compares them as the type's `==` says:
        /// two keys a type calls equal must encode to the same string).
        @inlinable
        static func same(_ lhs: Key, _ rhs: Key) -> Bool {
            if Key.self == String.self { return ExactKey.equal(lhs as! String, rhs as! String) }
            if Key.self == Substring.self { return ExactKey.equal(lhs as! Substring, rhs as! Substring) }
            return lhs == rhs
        }

        @inlinable
        static func == (lhs: HashedKey, rhs: HashedKey) -> Bool {
            lhs.hash == rhs.hash && same(lhs.key, rhs.key)
        }

        @inlinable
        func hash(into hasher: inout Hasher) {
            hasher.combine(hash)
        }
    }

    /// A slot's place in the recency list (`-1`: none), its cost and its
    /// key's hash: plain integers, so that relinking and evicting never
    /// touch keys or values.
    @usableFromInline
    struct Link {
        @usableFromInline var previous: Int
        @usableFromInline var next: Int
        @usableFromInline var cost: Int
        @usableFromInline var hash: Int

        @inlinable
        init(previous: Int, next: Int, cost: Int, hash: Int) {
            self.previous = previous
            self.next = next
            self.cost = cost
            self.hash = hash
        }
    }

    /// Everything the lock guards.
    @usableFromInline
    struct State {
        /// Hash → slot.
        @usableFromInline var index = SlotTable()
        /// Per slot: list links, cost and hash.
        @usableFromInline var links: [Link] = []
        /// Per slot: the key; `nil` for a free slot (listed in ``free``).
        /// Kept apart from the links and from each other so that no step
        /// copies a whole entry.
        @usableFromInline var keys: [Key?] = []
        /// Per slot: the object; `()` for a free slot.
        @usableFromInline var objects: [Any] = []
        /// Per slot: the expiry.
        @usableFromInline var expiries: [Date?] = []
        @usableFromInline var free: [Int] = []
        @usableFromInline var head = -1
        @usableFromInline var tail = -1
        @usableFromInline var cost = 0

        @inlinable
        init() {}

        @inlinable
        var count: Int { index.count }

        /// The slot holding `key`, if any.
        @inlinable
        func slot(for key: HashedKey) -> Int? {
            index.find(hash: key.hash) { slot in
                links[slot].hash == key.hash && keys[slot].map { HashedKey.same($0, key.key) } == true
            }
        }

        @inlinable
        mutating func unlink(_ slot: Int) {
            let previous = links[slot].previous
            let next = links[slot].next
            if previous >= 0 { links[previous].next = next } else { head = next }
            if next >= 0 { links[next].previous = previous } else { tail = previous }
            links[slot].previous = -1
            links[slot].next = -1
        }

        @inlinable
        mutating func linkAtHead(_ slot: Int) {
            links[slot].previous = -1
            links[slot].next = head
            if head >= 0 { links[head].previous = slot }
            head = slot
            if tail < 0 { tail = slot }
        }

        @inlinable
        mutating func moveToHead(_ slot: Int) {
            guard head != slot else { return }
            unlink(slot)
            linkAtHead(slot)
        }

        /// Takes `slot` out of the index and the list, and frees it.
        @inlinable
        mutating func release(_ slot: Int) {
            index.remove(slot: slot, hash: links[slot].hash)
            unlink(slot)
            cost -= links[slot].cost
            links[slot].cost = 0
            keys[slot] = nil
            objects[slot] = ()
            expiries[slot] = nil
            free.append(slot)
        }

        @inlinable
        mutating func remove(forKey key: HashedKey) -> Capsule? {
            guard let slot = slot(for: key) else { return nil }
            let capsule = self.capsule(at: slot)
            release(slot)
            return capsule
        }

        @inlinable
        func capsule(at slot: Int) -> Capsule {
            Capsule(object: objects[slot], expiry: expiries[slot], cost: links[slot].cost)
        }

        /// Puts a new key in a free slot (or a new one) at the head of the
        /// list; returns the slot.
        @inlinable
        mutating func add(_ capsule: Capsule, key: HashedKey) -> Int {
            let slot: Int
            if let recycled = free.popLast() {
                slot = recycled
                links[slot].cost = capsule.cost
                links[slot].hash = key.hash
                keys[slot] = key.key
                objects[slot] = capsule.object
                expiries[slot] = capsule.expiry
            } else {
                slot = links.count
                links.append(Link(previous: -1, next: -1, cost: capsule.cost, hash: key.hash))
                keys.append(key.key)
                objects.append(capsule.object)
                expiries.append(capsule.expiry)
            }
            index.insert(slot: slot, hash: key.hash)
            cost += capsule.cost
            linkAtHead(slot)
            return slot
        }

        /// Evicts the least recently used entry and puts a new key in its
        /// slot, at the head of the list; returns the slot.
        @inlinable
        mutating func recycleTail(for capsule: Capsule, key: HashedKey) -> Int {
            let slot = tail
            index.remove(slot: slot, hash: links[slot].hash)
            unlink(slot)
            cost += capsule.cost - links[slot].cost
            links[slot].cost = capsule.cost
            links[slot].hash = key.hash
            keys[slot] = key.key
            objects[slot] = capsule.object
            expiries[slot] = capsule.expiry
            index.insert(slot: slot, hash: key.hash)
            linkAtHead(slot)
            return slot
        }

        /// Replaces the object in `slot` (same key) and moves it to the head.
        @inlinable
        mutating func replace(_ capsule: Capsule, at slot: Int) {
            cost += capsule.cost - links[slot].cost
            links[slot].cost = capsule.cost
            objects[slot] = capsule.object
            expiries[slot] = capsule.expiry
            moveToHead(slot)
        }

        /// Why the state is inconsistent, or `nil`: the list and the index agree.
        var inconsistency: String? {
            if let problem = index.inconsistency { return "index: \(problem)" }
            var listed = 0
            var listedCost = 0
            var previous = -1
            var slot = head
            while slot >= 0 {
                guard listed < links.count else { return "the list loops" }
                guard links[slot].previous == previous else { return "slot \(slot): bad back link" }
                guard let key = keys[slot] else { return "slot \(slot) listed but free" }
                guard self.slot(for: HashedKey(key, hash: links[slot].hash)) == slot else {
                    return "slot \(slot) not found by its key"
                }
                listed += 1
                listedCost += links[slot].cost
                previous = slot
                slot = links[slot].next
            }
            if tail != previous { return "tail \(tail), last listed \(previous)" }
            if listed != count { return "\(listed) listed, index holds \(count)" }
            if listedCost != cost { return "cost \(cost), listed \(listedCost)" }
            if free.count + listed != links.count {
                return "\(free.count) free + \(listed) listed ≠ \(links.count) slots"
            }
            if free.contains(where: { keys[$0] != nil }) { return "a free slot holds a key" }
            return nil
        }
    }

    @usableFromInline let countLimit: Int
    @usableFromInline let totalCostLimit: Int
    @usableFromInline let lock = NSLock()
    /// Only touched under `lock` (``withState(_:)``), which already makes
    /// accesses exclusive: the runtime's exclusivity check on every get is
    /// skipped.
    @exclusivity(unchecked) @usableFromInline var state = State()

    /// Limits of `0` mean none.
    init(countLimit: Int, totalCostLimit: Int) {
        self.countLimit = countLimit
        self.totalCostLimit = totalCostLimit
    }

    var count: Int { withState { $0.count } }
    var totalCost: Int { withState { $0.cost } }

    /// Keys from most to least recently used.
    var keys: [Key] {
        withState { state in
            var result: [Key] = []
            result.reserveCapacity(state.count)
            var slot = state.head
            while slot >= 0 {
                if let key = state.keys[slot] { result.append(key) }
                slot = state.links[slot].next
            }
            return result
        }
    }

    /// The capsule for `key`; a hit becomes the most recently used.
    @inlinable
    func capsule(forKey key: Key, touch: Bool = true) -> Capsule? {
        capsule(forKey: HashedKey(key), touch: touch)
    }

    /// The capsule for `key`; a hit becomes the most recently used.
    @inlinable
    func capsule(forKey key: HashedKey, touch: Bool = true) -> Capsule? {
        withState { state in
            guard let slot = state.slot(for: key) else { return nil }
            if touch { state.moveToHead(slot) }
            return state.capsule(at: slot)
        }
    }

    /// Under one hold of the lock: `gate`, then, unless it returned `nil`,
    /// the capsule for `key` (a hit becomes the most recently used).
    @inlinable
    func capsule<Pass>(forKey key: HashedKey, touch: Bool = true, gate: () -> Pass?) -> (
        pass: Pass, capsule: Capsule?
    )? {
        withState { state in
            guard let pass = gate() else { return nil }
            guard let slot = state.slot(for: key) else { return (pass, nil) }
            if touch { state.moveToHead(slot) }
            return (pass, state.capsule(at: slot))
        }
    }

    /// Stores `capsule`, then evicts least-recently-used entries until both
    /// limits hold. A capsule costlier than the whole cost limit is not
    /// kept (and replaces nothing).
    @inlinable
    func set(_ capsule: Capsule, forKey key: Key) {
        set(capsule, forKey: HashedKey(key))
    }

    /// Stores `capsule` under a key hashed earlier (say, by the lookup that
    /// missed) when `admit`, evaluated under this cache's lock, allows it.
    @inlinable
    func set(_ capsule: Capsule, forKey key: HashedKey, if admit: () -> Bool) {
        withState { state in
            guard admit() else { return }
            Self.set(capsule, forKey: key, in: &state, countLimit: countLimit, totalCostLimit: totalCostLimit)
        }
    }

    /// Stores `capsule` under a key hashed earlier (say, by the lookup that missed).
    @inlinable
    func set(_ capsule: Capsule, forKey key: HashedKey) {
        withState { state in
            Self.set(capsule, forKey: key, in: &state, countLimit: countLimit, totalCostLimit: totalCostLimit)
        }
    }

    @inlinable
    static func set(
        _ capsule: Capsule, forKey key: HashedKey, in state: inout State, countLimit: Int, totalCostLimit: Int
    ) {
        if totalCostLimit > 0 && capsule.cost > totalCostLimit {
            _ = state.remove(forKey: key)
            return
        }
        let slot: Int
        if let existing = state.slot(for: key) {
            state.replace(capsule, at: existing)
            slot = existing
        } else if countLimit > 0 && state.count >= countLimit {
            // Full: the least recently used entry goes either way, and its
            // slot takes the new one (a disk hit through a full memory tier
            // allocates nothing).
            slot = state.recycleTail(for: capsule, key: key)
        } else {
            // The slots evicted below are reused by the next inserts.
            slot = state.add(capsule, key: key)
        }
        while state.tail >= 0, state.tail != slot,
            (countLimit > 0 && state.count > countLimit) || (totalCostLimit > 0 && state.cost > totalCostLimit)
        {
            state.release(state.tail)
        }
    }

    @inlinable @discardableResult
    func remove(forKey key: Key) -> Capsule? {
        remove(forKey: HashedKey(key))
    }

    @inlinable @discardableResult
    func remove(forKey key: HashedKey) -> Capsule? {
        withState { $0.remove(forKey: key) }
    }

    /// Whether `key` is held (without touching it).
    func contains(_ key: HashedKey) -> Bool {
        withState { $0.slot(for: key) != nil }
    }

    func removeAll() {
        withState { $0 = State() }
    }

    /// Removes expired entries; returns their keys.
    @discardableResult
    func removeExpired(at now: Date = Date()) -> [Key] {
        withState { state in
            var removed: [Key] = []
            for slot in state.keys.indices {
                guard let key = state.keys[slot], let expiry = state.expiries[slot], expiry <= now else { continue }
                removed.append(key)
                state.release(slot)
            }
            return removed
        }
    }

    /// Why the cache is inconsistent, or `nil` (a check of its invariants).
    var inconsistency: String? {
        withState { $0.inconsistency }
    }

    @inlinable
    func withState<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

// All state is guarded by `lock`; keys cross threads.
extension LRUCache: @unchecked Sendable where Key: Sendable {}
