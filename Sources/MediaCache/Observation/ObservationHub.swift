import Foundation

/// A value as it travels to key observers of any transformed view: the
/// object itself and, when known, its stored bytes (so a view of another
/// type can decode it).
struct ObservedValue {
    let object: Any?
    let data: Data?
}

/// A key event before it is typed for a particular observer.
enum KeyEvent {
    case edit(before: ObservedValue?, after: ObservedValue)
    case remove
}

/// The observer registries shared by a storage and all of its transformed
/// views. Only touched inside the storage's serialization domain.
final class ObservationHub<Key: Hashable> {
    /// Each closure returns `false` once its observer is gone.
    private(set) var storageObservations: [UUID: (StorageChange<Key>) -> Bool] = [:]
    /// Several observers per key, each under its own id; String keys by
    /// their bytes, as the tiers (`ExactKey`).
    private(set) var keyObservations: [LRUCache<Key>.HashedKey: [UUID: (KeyEvent) -> Bool]] = [:]

    func addStorageObservation(_ closure: @escaping (StorageChange<Key>) -> Bool) -> UUID {
        let id = UUID()
        storageObservations[id] = closure
        return id
    }

    func removeStorageObservation(_ id: UUID) {
        storageObservations[id] = nil
    }

    func removeAllStorageObservations() {
        storageObservations.removeAll()
    }

    func addKeyObservation(forKey key: Key, _ closure: @escaping (KeyEvent) -> Bool) -> UUID {
        let id = UUID()
        keyObservations[.init(key), default: [:]][id] = closure
        return id
    }

    func removeKeyObservation(forKey key: Key, id: UUID) {
        let key = LRUCache<Key>.HashedKey(key)
        keyObservations[key]?[id] = nil
        if keyObservations[key]?.isEmpty == true { keyObservations[key] = nil }
    }

    func removeKeyObservations(forKey key: Key) {
        keyObservations[.init(key)] = nil
    }

    func removeAllKeyObservations() {
        keyObservations.removeAll()
    }

    func hasKeyObservers(for key: Key) -> Bool {
        keyObservations[.init(key)] != nil
    }

    var observedKeys: [Key] { keyObservations.keys.map(\.key) }

    func notify(_ change: StorageChange<Key>) {
        for (id, closure) in storageObservations where !closure(change) {
            storageObservations[id] = nil
        }
    }

    func notify(key: Key, _ event: KeyEvent) {
        guard let observers = keyObservations[.init(key)] else { return }
        for (id, closure) in observers where !closure(event) {
            removeKeyObservation(forKey: key, id: id)
        }
    }

    func notifyAllKeys(_ event: KeyEvent) {
        for key in observedKeys { notify(key: key, event) }
    }
}

// Its registries are only touched inside the storage's serialization domain; keys cross threads.
extension ObservationHub: @unchecked Sendable where Key: Sendable {}
