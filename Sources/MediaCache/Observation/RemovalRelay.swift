import Foundation
import MediaStore

/// Turns the entries a store removes by itself (LRU eviction under
/// `maxSize` or `countLimit`, expiry sweeps) into a storage's events: the
/// key leaves the memory tier, its key observers get `.remove`, and storage
/// observers get `.remove(key:)` for an eviction, or one `.removeExpired`
/// for a sweep that some other user of the store ran.
///
/// One relay serves a storage and all of its transformed views. The store
/// reports on its writing thread while it holds its write lock, so the
/// relay only queues the report there: the storage's own writes deliver it
/// as they finish (so a `setObject` that evicts has notified before it
/// returns), and a report caused by anyone else (another storage on the
/// same store, the engine used directly, a background flush) is delivered
/// by a job queued on the storage's serialization domain, before any sync
/// call made after it.
final class RemovalRelay<Key: Hashable> {
    /// `nil` when the store could not be opened (then nothing is removed by it).
    private let store: MediaStore?
    private let cache: LRUCache<Key>
    private let hub: ObservationHub<Key>
    private let inbox: RemovalInbox

    init(store: MediaStore?, cache: LRUCache<Key>, hub: ObservationHub<Key>, domain: SerialDomain) {
        self.store = store
        self.cache = cache
        self.hub = hub
        self.inbox = RemovalInbox(domain: domain)
        if let store { inbox.start(store: store) { [weak self] in self?.deliver() } }
    }

    /// Delivers every queued removal. Call inside the domain.
    ///
    /// - parameter announceSweeps: whether expired removals end with one
    ///   storage `.removeExpired` (`false` inside `removeExpiredObjects()`,
    ///   which sends its own).
    func deliver(announceSweeps: Bool = true) {
        let removals = inbox.take()
        guard !removals.isEmpty else { return }

        var storageObserved = !hub.storageObservations.isEmpty
        var fallbackKeys: [String: Key]?
        var swept = false
        for removal in removals {
            if removal.reason == .expired { swept = true }
            guard let key = resolve(removal.key, fallback: &fallbackKeys) else { continue }
            let memoryKey = LRUCache<Key>.HashedKey(key)
            let keyObserved = hub.hasKeyObservers(for: key)
            guard keyObserved || storageObserved || cache.contains(memoryKey) else { continue }
            // The memory copy predates the removal either way.
            cache.remove(forKey: memoryKey)
            // Written again since (say, by another storage on the store): not gone.
            if (try? store?.info(forKey: removal.key)) != nil { continue }
            hub.notify(key: key, .remove)
            if removal.reason == .evicted {
                hub.notify(.remove(key: key))
                storageObserved = !hub.storageObservations.isEmpty
            }
        }
        if swept && announceSweeps { hub.notify(.removeExpired) }
    }

    /// The key a store key stands for: decoded when the key type allows
    /// it, otherwise matched against the keys in memory and the observed keys.
    private func resolve(_ storeKey: String, fallback: inout [String: Key]?) -> Key? {
        if let key = KeyCoder.decode(storeKey, as: Key.self) { return key }
        if fallback == nil {
            var known: [String: Key] = [:]
            for key in cache.keys + hub.observedKeys { known[KeyCoder.encode(key)] = key }
            fallback = known
        }
        return fallback?[storeKey]
    }
}

/// The part of a ``RemovalRelay`` that the store's writer calls: it only
/// queues reports and schedules their delivery on the domain. (Not generic,
/// so that nothing sent to another thread captures the key type.)
// Unchecked: `pending` is guarded by `lock`; `deliver` and `subscription` are set once in `start` and `deliver` runs only in the domain.
final class RemovalInbox: @unchecked Sendable {
    private let domain: SerialDomain
    private let lock = NSLock()
    private var pending: [StoreRemoval] = []
    /// Set once, before the subscription starts; called inside the domain.
    private var deliver: () -> Void = {}
    private var subscription: RemovalObservation?

    init(domain: SerialDomain) {
        self.domain = domain
    }

    /// Subscribes to `store`'s reports; `deliver` runs them inside the domain.
    func start(store: MediaStore, deliver: @escaping () -> Void) {
        self.deliver = deliver
        subscription = store.addRemovalObserver { [weak self] removals in
            self?.receive(removals)
        }
    }

    /// Queues `removals` (any thread; must not wait for the domain).
    private func receive(_ removals: [StoreRemoval]) {
        lock.lock()
        let wasEmpty = pending.isEmpty
        pending.append(contentsOf: removals)
        lock.unlock()
        guard wasEmpty else { return }  // a delivery is already queued
        // Reads outside the domain go through it until the delivery ran.
        domain.enqueue()
        domain.queue.async { [weak self, domain] in
            defer { domain.dequeue() }
            guard let self else { return }
            self.domain.sync { self.deliver() }
        }
    }

    /// Takes every queued report.
    func take() -> [StoreRemoval] {
        lock.lock()
        defer { lock.unlock() }
        let removals = pending
        pending.removeAll()
        return removals
    }
}

// Its memory tier and hub are only touched inside the storage's domain (``deliver(announceSweeps:)``); keys cross threads.
extension RemovalRelay: @unchecked Sendable where Key: Sendable {}
