import Foundation
import MediaStore

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
/// hashes its key's bytes once instead of three times; and the calls a read
/// makes are `@inlinable`, so a client module specializes them for its key
/// type instead of running generic dictionary code through witness tables.
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

    /// A key with its hash computed once (with the process's seed). The
    /// index hashes just that integer, and equal hashes are confirmed by
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

    /// A slot's place in the recency list (`-1`: none) and its cost: plain
    /// integers, so that relinking never touches keys or values.
    @usableFromInline
    struct Link {
        @usableFromInline var previous: Int
        @usableFromInline var next: Int
        @usableFromInline var cost: Int

        @inlinable
        init(previous: Int, next: Int, cost: Int) {
            self.previous = previous
            self.next = next
            self.cost = cost
        }
    }

    /// Everything the lock guards.
    @usableFromInline
    struct State {
        /// Key → slot.
        @usableFromInline var index: [HashedKey: Int] = [:]
        /// Per slot: list links and cost.
        @usableFromInline var links: [Link] = []
        /// Per slot: the key; `nil` for a free slot (listed in ``free``).
        /// Kept apart from the links and from each other so that no step
        /// copies a whole entry.
        @usableFromInline var keys: [HashedKey?] = []
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

        /// Unlinks and frees `slot`, which ``index`` no longer maps.
        @inlinable
        mutating func release(_ slot: Int) {
            unlink(slot)
            cost -= links[slot].cost
            links[slot].cost = 0
            keys[slot] = nil
            objects[slot] = ()
            free.append(slot)
        }

        @inlinable
        mutating func remove(forKey key: HashedKey) -> Capsule? {
            guard let slot = index.removeValue(forKey: key) else { return nil }
            let capsule = self.capsule(at: slot)
            release(slot)
            return capsule
        }

        @inlinable
        mutating func evictTail() {
            let slot = tail
            if let key = keys[slot] { index[key] = nil }
            release(slot)
        }

        @inlinable
        func capsule(at slot: Int) -> Capsule {
            Capsule(object: objects[slot], expiry: expiries[slot], cost: links[slot].cost)
        }

        /// Fills `slot` (appending it when it is new).
        @inlinable
        mutating func store(_ capsule: Capsule, key: HashedKey, at slot: Int) {
            if slot == links.count {
                links.append(Link(previous: -1, next: -1, cost: capsule.cost))
                keys.append(key)
                objects.append(capsule.object)
                expiries.append(capsule.expiry)
            } else {
                links[slot].cost = capsule.cost
                keys[slot] = key
                objects[slot] = capsule.object
                expiries[slot] = capsule.expiry
            }
            cost += capsule.cost
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

    var count: Int { withState { $0.index.count } }
    var totalCost: Int { withState { $0.cost } }

    /// Keys from most to least recently used.
    var keys: [Key] {
        withState { state in
            var result: [Key] = []
            result.reserveCapacity(state.index.count)
            var slot = state.head
            while slot >= 0 {
                if let key = state.keys[slot] { result.append(key.key) }
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
            guard let slot = state.index[key] else { return nil }
            if touch { state.moveToHead(slot) }
            return state.capsule(at: slot)
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
        do {
            if totalCostLimit > 0 && capsule.cost > totalCostLimit {
                _ = state.remove(forKey: key)
                return
            }
            // One hash for a new key: claim a slot and insert in one step.
            let recycled = state.free.popLast()
            let slot = recycled ?? state.links.count
            if let existing = state.index.updateValue(slot, forKey: key) {
                // A replacement: put the old slot back and update it in place.
                state.index[key] = existing
                if let recycled { state.free.append(recycled) }
                state.cost -= state.links[existing].cost
                state.store(capsule, key: key, at: existing)
                state.moveToHead(existing)
                evictOverLimits(&state, keeping: existing, countLimit: countLimit, totalCostLimit: totalCostLimit)
                return
            }
            state.store(capsule, key: key, at: slot)
            state.linkAtHead(slot)
            // The evicted slots are reused by the next inserts, so a disk
            // hit through a full memory tier allocates nothing.
            evictOverLimits(&state, keeping: slot, countLimit: countLimit, totalCostLimit: totalCostLimit)
        }
    }

    @inlinable
    static func evictOverLimits(_ state: inout State, keeping slot: Int, countLimit: Int, totalCostLimit: Int) {
        while state.tail >= 0, state.tail != slot,
            (countLimit > 0 && state.index.count > countLimit) || (totalCostLimit > 0 && state.cost > totalCostLimit)
        {
            state.evictTail()
        }
    }

    @discardableResult
    func remove(forKey key: Key) -> Capsule? {
        remove(forKey: HashedKey(key))
    }

    @discardableResult
    func remove(forKey key: HashedKey) -> Capsule? {
        withState { $0.remove(forKey: key) }
    }

    /// Whether `key` is held (without touching it).
    func contains(_ key: HashedKey) -> Bool {
        withState { $0.index[key] != nil }
    }

    func removeAll() {
        withState { $0 = State() }
    }

    /// Removes expired entries; returns their keys.
    @discardableResult
    func removeExpired(at now: Date = Date()) -> [Key] {
        withState { state in
            let expired = state.index.filter { state.capsule(at: $0.value).isExpired(at: now) }
            for (key, slot) in expired {
                state.index[key] = nil
                state.release(slot)
            }
            return expired.keys.map(\.key)
        }
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
