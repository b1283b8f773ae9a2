import Foundation

/// A least-recently-used map with exact count and cost limits: a
/// dictionary of nodes threaded on a doubly linked list, most recent at the
/// head. Values are untyped so that every transformed view of a storage
/// shares one memory tier. Thread-safe.
final class LRUCache<Key: Hashable>: @unchecked Sendable {
    struct Capsule {
        var object: Any
        /// `nil`: never expires.
        var expiry: Date?
        var cost: Int

        func isExpired(at now: Date) -> Bool {
            guard let expiry else { return false }
            return expiry <= now
        }
    }

    private final class Node {
        let key: Key
        var capsule: Capsule
        // The dictionary owns every node; the list links do not.
        unowned(unsafe) var previous: Node?
        unowned(unsafe) var next: Node?

        init(key: Key, capsule: Capsule) {
            self.key = key
            self.capsule = capsule
        }
    }

    let countLimit: Int
    let totalCostLimit: Int
    private let lock = NSLock()
    private var nodes: [Key: Node] = [:]
    private var head: Node?
    private var tail: Node?
    private var cost = 0

    /// Limits of `0` mean none.
    init(countLimit: Int, totalCostLimit: Int) {
        self.countLimit = countLimit
        self.totalCostLimit = totalCostLimit
    }

    var count: Int { withLock { nodes.count } }
    var totalCost: Int { withLock { cost } }

    /// Keys from most to least recently used.
    var keys: [Key] {
        withLock {
            var result: [Key] = []
            result.reserveCapacity(nodes.count)
            var node = head
            while let current = node {
                result.append(current.key)
                node = current.next
            }
            return result
        }
    }

    /// The capsule for `key`; a hit becomes the most recently used.
    func capsule(forKey key: Key, touch: Bool = true) -> Capsule? {
        withLock {
            guard let node = nodes[key] else { return nil }
            if touch { moveToHead(node) }
            return node.capsule
        }
    }

    /// Stores `capsule`, then evicts least-recently-used entries until both
    /// limits hold. A capsule costlier than the whole cost limit is not
    /// kept (and replaces nothing). Returns the evicted keys.
    @discardableResult
    func set(_ capsule: Capsule, forKey key: Key) -> [Key] {
        withLock {
            if let node = nodes[key] {
                unlink(node)
                nodes[key] = nil
                cost -= node.capsule.cost
            }
            if totalCostLimit > 0 && capsule.cost > totalCostLimit { return [] }
            let node = Node(key: key, capsule: capsule)
            nodes[key] = node
            cost += capsule.cost
            linkAtHead(node)
            var evicted: [Key] = []
            while let last = tail, last !== node,
                (countLimit > 0 && nodes.count > countLimit) || (totalCostLimit > 0 && cost > totalCostLimit)
            {
                evicted.append(last.key)
                removeNode(last)
            }
            return evicted
        }
    }

    @discardableResult
    func remove(forKey key: Key) -> Capsule? {
        withLock {
            guard let node = nodes[key] else { return nil }
            removeNode(node)
            return node.capsule
        }
    }

    func removeAll() {
        withLock {
            head = nil
            tail = nil
            nodes.removeAll()
            cost = 0
        }
    }

    /// Removes expired entries; returns their keys.
    @discardableResult
    func removeExpired(at now: Date = Date()) -> [Key] {
        withLock {
            let expired = nodes.values.filter { $0.capsule.isExpired(at: now) }
            for node in expired { removeNode(node) }
            return expired.map(\.key)
        }
    }

    // MARK: List

    private func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func removeNode(_ node: Node) {
        unlink(node)
        nodes[node.key] = nil
        cost -= node.capsule.cost
    }

    private func moveToHead(_ node: Node) {
        guard head !== node else { return }
        unlink(node)
        linkAtHead(node)
    }

    private func linkAtHead(_ node: Node) {
        node.previous = nil
        node.next = head
        head?.previous = node
        head = node
        if tail == nil { tail = node }
    }

    private func unlink(_ node: Node) {
        if let previous = node.previous { previous.next = node.next } else if head === node { head = node.next }
        if let next = node.next { next.previous = node.previous } else if tail === node { tail = node.previous }
        node.previous = nil
        node.next = nil
    }
}
