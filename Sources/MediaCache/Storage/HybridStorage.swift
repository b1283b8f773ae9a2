import Foundation
import MediaStore

/// Memory first, then disk: the two tiers behind a ``Storage``, and the
/// storage's one serialization domain and observer registries.
///
/// Every operation runs inside the domain (re-entrantly), so a
/// `HybridStorage` is safe to use from any thread, and all transformed views
/// of it share the memory tier, the store, the domain and the observers.
public final class HybridStorage<Key: Hashable, Value> {
    /// The memory tier.
    public let memoryStorage: MemoryStorage<Key, Value>
    /// The disk tier.
    public let diskStorage: DiskStorage<Key, Value>
    @usableFromInline let domain: SerialDomain
    let hub: ObservationHub<Key>
    /// Delivers the entries the store removes by itself (evictions, sweeps).
    let removals: RemovalRelay<Key>

    /// Combines the two tiers under a new serialization domain.
    ///
    /// Entries the store removes by itself (least-recently-used eviction
    /// under ``DiskConfig/maxSize`` or ``DiskConfig/countLimit``, expiry
    /// sweeps, also when caused by another storage on the same store) leave
    /// the memory tier and are reported to the observers.
    public convenience init(memoryStorage: MemoryStorage<Key, Value>, diskStorage: DiskStorage<Key, Value>) {
        // The domain's activity shares the memory tier's lock (see `object(forKey:)`).
        let domain = SerialDomain(label: "MediaCache.Storage.SerialQueue", activityLock: memoryStorage.cache.lock)
        let hub = ObservationHub<Key>()
        self.init(
            memoryStorage: memoryStorage, diskStorage: diskStorage, domain: domain, hub: hub,
            removals: RemovalRelay(store: try? diskStorage.store, cache: memoryStorage.cache, hub: hub, domain: domain))
    }

    init(
        memoryStorage: MemoryStorage<Key, Value>, diskStorage: DiskStorage<Key, Value>, domain: SerialDomain,
        hub: ObservationHub<Key>, removals: RemovalRelay<Key>
    ) {
        precondition(domain.activityLock === memoryStorage.cache.lock, "the domain's activity has its own lock")
        self.memoryStorage = memoryStorage
        self.diskStorage = diskStorage
        self.domain = domain
        self.hub = hub
        self.removals = removals
    }

    /// Bytes the disk tier occupies.
    public var totalDiskStorageSize: Int? {
        diskStorage.totalSize
    }

    // MARK: Reads

    /// The entry for `key`, expired or not: from memory when it holds an
    /// unexpired object, otherwise from disk (then copied into memory with
    /// the disk's expiry).
    /// - throws: ``StorageError/notFound`` when neither tier has it.
    @inlinable
    public func entry(forKey key: Key) throws -> Entry<Value> {
        try domain.sync {
            let memoryKey = LRUCache<Key>.HashedKey(key)
            var stale: Entry<Value>?
            if let capsule = memoryStorage.cache.capsule(forKey: memoryKey), let object = capsule.object as? Value {
                let entry = Entry(object: object, expiry: Expiry(absoluteDate: capsule.expiry), filePath: nil)
                if !entry.expiry.isExpired { return entry }
                stale = entry
            }
            if let raw = try diskStorage.rawEntry(forKey: key) {
                let object = try diskStorage.decode(raw.data)
                memoryStorage.setObject(object, forKey: memoryKey, absoluteExpiry: raw.expiry, cost: raw.data.count)
                return Entry(object: object, expiry: Expiry(absoluteDate: raw.expiry), filePath: diskStorage.path)
            }
            if let stale { return stale }
            throw StorageError.notFound
        }
    }

    /// The unexpired object for `key`.
    /// - throws: ``StorageError/notFound`` when missing or expired.
    ///
    /// When nothing runs in the serialization domain and no job waits for
    /// it, runs outside it (a `DispatchQueue.sync` less per get): each tier
    /// is safe to read on its own, and a disk hit fills the memory tier
    /// only when no call of the domain ran meanwhile or runs now (checked
    /// under the memory tier's lock). A write, removal or sweep that raced the read therefore
    /// cannot be undone by it: the memory tier never gets a value the disk
    /// no longer has.
    ///
    /// While a call runs in the domain, or a job waits for it (the store's
    /// report of an entry it evicted, say), the get goes through the domain,
    /// behind them, as every call did before.
    ///
    /// The domain's activity is guarded by the memory tier's lock, so the
    /// ticket is taken with the memory lookup, and checked with the fill,
    /// under one lock each: a get that hits memory takes one lock, one
    /// that reads the disk two.
    @inlinable
    public func object(forKey key: Key) throws -> Value {
        let cache = memoryStorage.cache
        // Hashed once for the lookup and the insert that follows a miss.
        let memoryKey = LRUCache<Key>.HashedKey(key)
        guard let (ticket, capsule) = cache.capsule(forKey: memoryKey, gate: { domain.ticketUnderLock() }) else {
            return try domain.sync { try objectInDomain(forKey: key) }
        }
        if let capsule, !capsule.isExpired(at: Date()), let object = capsule.object as? Value { return object }
        guard let live = try diskStorage.liveEntry(forKey: key) else { throw StorageError.notFound }
        let object = try diskStorage.decode(live.data)
        let fill = LRUCache<Key>.Capsule(object: object, expiry: live.expiry, cost: max(0, live.data.count))
        cache.set(fill, forKey: memoryKey, if: { domain.isUnchangedUnderLock(since: ticket) })
        return object
    }

    /// ``object(forKey:)`` inside the domain: nothing else runs meanwhile.
    @inlinable
    func objectInDomain(forKey key: Key) throws -> Value {
        let memoryKey = LRUCache<Key>.HashedKey(key)
        if let object = liveMemoryObject(forKey: memoryKey, touch: true) { return object }
        guard let live = try diskStorage.liveEntry(forKey: key) else { throw StorageError.notFound }
        let object = try diskStorage.decode(live.data)
        memoryStorage.setObject(object, forKey: memoryKey, absoluteExpiry: live.expiry, cost: live.data.count)
        return object
    }

    /// Whether an unexpired object exists for `key` (without decoding it).
    @inlinable
    public func objectExists(forKey key: Key) -> Bool {
        domain.sync {
            liveMemoryObject(forKey: LRUCache<Key>.HashedKey(key), touch: false) != nil
                || diskStorage.objectExists(forKey: key)
        }
    }

    @inlinable
    func liveMemoryObject(forKey key: LRUCache<Key>.HashedKey, touch: Bool) -> Value? {
        guard let capsule = memoryStorage.cache.capsule(forKey: key, touch: touch), !capsule.isExpired(at: Date())
        else { return nil }
        return capsule.object as? Value
    }

    /// Keys of every unexpired object, on disk or in memory.
    public var allKeys: [Key] {
        domain.sync {
            var keys = diskStorage.allKeys
            var seen = Set(keys.map { LRUCache<Key>.HashedKey($0) })
            for key in memoryStorage.allKeys where seen.insert(LRUCache<Key>.HashedKey(key)).inserted {
                keys.append(key)
            }
            return keys
        }
    }

    /// Every unexpired object, on disk or in memory (read without filling
    /// the memory tier).
    public var allObjects: [Value] {
        domain.sync {
            allKeys.compactMap { key in
                if let object = liveMemoryObject(forKey: LRUCache<Key>.HashedKey(key), touch: false) { return object }
                guard let live = try? diskStorage.liveEntry(forKey: key) else { return nil }
                return try? diskStorage.decode(live.data)
            }
        }
    }

    // MARK: Writes

    /// Writes `object` to disk, then to memory, then notifies the key's
    /// observers (`.edit`) and the storage observers (`.add`). When the disk
    /// write fails nothing changes and nobody is notified. Entries the store
    /// evicted to make room are reported after that (key `.remove`, then
    /// storage `.remove(key:)`), before this returns.
    ///
    /// With `expiry` `nil`, the disk uses ``DiskConfig/expiry`` and memory
    /// ``MemoryConfig/expiry``, but never beyond the disk's.
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        try domain.sync {
            defer { removals.deliver() }
            let data = try diskStorage.transformer.toData(object)
            let before = hub.hasKeyObservers(for: key) ? currentValue(forKey: key) : nil
            let diskExpiry = try diskStorage.setData(data, forKey: key, expiry: expiry)
            var memoryExpiry = diskExpiry
            if expiry == nil, let configured = memoryStorage.config.expiry.absoluteDate {
                memoryExpiry = min(configured, diskExpiry ?? configured)
            }
            memoryStorage.setObject(
                object, forKey: LRUCache<Key>.HashedKey(key), absoluteExpiry: memoryExpiry, cost: data.count)
            hub.notify(key: key, .edit(before: before, after: ObservedValue(object: object, data: data)))
            hub.notify(.add(key: key))
        }
    }

    private func currentValue(forKey key: Key) -> ObservedValue? {
        let memory = memoryStorage.cache.capsule(forKey: key, touch: false)?.object
        let raw = try? diskStorage.rawEntry(forKey: key)
        guard memory != nil || raw != nil else { return nil }
        return ObservedValue(object: memory, data: raw?.data)
    }

    /// Removes the object for `key` from both tiers; a missing key is not an
    /// error. Notifies (key `.remove`, then storage `.remove`) when there was one.
    public func removeObject(forKey key: Key) throws {
        try domain.sync {
            defer { removals.deliver() }
            let inMemory = memoryStorage.cache.remove(forKey: key) != nil
            let onDisk = try diskStorage.removeData(forKey: key)
            guard inMemory || onDisk else { return }
            hub.notify(key: key, .remove)
            hub.notify(.remove(key: key))
        }
    }

    /// Removes everything; notifies `.removeAll`, then `.remove` to every
    /// key observer.
    public func removeAll() throws {
        try domain.sync {
            removals.deliver()
            memoryStorage.removeAll()
            try diskStorage.removeAll()
            hub.notify(.removeAll)
            hub.notifyAllKeys(.remove)
        }
    }

    /// Removes expired objects from both tiers; notifies `.remove` to the
    /// observers of each key removed from disk, then `.removeExpired`.
    public func removeExpiredObjects() throws {
        try domain.sync {
            memoryStorage.removeExpiredObjects()
            do {
                // The store reports each entry it sweeps (not pinned or in use).
                try diskStorage.removeExpiredObjects()
            } catch {
                removals.deliver()
                throw error
            }
            removals.deliver(announceSweeps: false)
            hub.notify(.removeExpired)
        }
    }

    /// Removes the object for `key` from memory only; notifies `.removeInMemory`.
    public func removeInMemoryObject(forKey key: Key) throws {
        domain.sync {
            memoryStorage.removeObject(forKey: key)
            hub.notify(.removeInMemory(key: key))
        }
    }

    // MARK: Transform

    /// A view of this storage for values of another type, sharing the
    /// memory tier, the store, the serialization domain and the observers.
    public func transform<U>(transformer: Transformer<U>) -> HybridStorage<Key, U> {
        HybridStorage<Key, U>(
            memoryStorage: memoryStorage.transform(transformer: transformer),
            diskStorage: diskStorage.transform(transformer: transformer), domain: domain, hub: hub,
            removals: removals)
    }
}

extension HybridStorage: StorageAware {}

// MARK: - Observation

extension HybridStorage: StorageObservationRegistry {
    /// Registers `observer` (held weakly) for every change of the storage
    /// and of its transformed views.
    @discardableResult
    public func addStorageObserver<O: AnyObject>(
        _ observer: O, closure: @escaping (O, HybridStorage, StorageChange<Key>) -> Void
    ) -> ObservationToken {
        let id = domain.sync {
            hub.addStorageObservation { [weak observer, weak self] change in
                guard let observer, let self else { return false }
                closure(observer, self, change)
                return true
            }
        }
        return ObservationToken { [domain, hub] in
            domain.sync { hub.removeStorageObservation(id) }
        }
    }

    /// Removes every storage observer.
    public func removeAllStorageObservers() {
        domain.sync { hub.removeAllStorageObservations() }
    }

    var storageObservationCount: Int {
        domain.sync { hub.storageObservations.count }
    }
}

extension HybridStorage: KeyObservationRegistry {
    /// Registers `observer` (held weakly) for changes of `key`, also those
    /// made through transformed views. Several observers may watch one key.
    @discardableResult
    public func addObserver<O: AnyObject>(
        _ observer: O, forKey key: Key, closure: @escaping (O, HybridStorage, KeyChange<Value>) -> Void
    ) -> ObservationToken {
        let transformer = diskStorage.transformer
        let id = domain.sync {
            hub.addKeyObservation(forKey: key) { [weak observer, weak self] event in
                guard let observer, let self else { return false }
                switch event {
                case .remove:
                    closure(observer, self, .remove)
                case .edit(let before, let after):
                    guard let after = Self.typed(after, transformer) else { return true }
                    closure(observer, self, .edit(before: before.flatMap { Self.typed($0, transformer) }, after: after))
                }
                return true
            }
        }
        return ObservationToken { [domain, hub] in
            domain.sync { hub.removeKeyObservation(forKey: key, id: id) }
        }
    }

    private static func typed(_ value: ObservedValue, _ transformer: Transformer<Value>) -> Value? {
        if let object = value.object as? Value { return object }
        return value.data.flatMap { try? transformer.fromData($0) }
    }

    /// Removes the observers of `key`.
    public func removeObserver(forKey key: Key) {
        domain.sync { hub.removeKeyObservations(forKey: key) }
    }

    /// Removes every key observer.
    public func removeAllKeyObservers() {
        domain.sync { hub.removeAllKeyObservations() }
    }

    func keyObservationCount(forKey key: Key) -> Int {
        domain.sync { hub.keyObservations[LRUCache<Key>.HashedKey(key)]?.count ?? 0 }
    }
}

// Its tiers and observer registries are only touched inside its serialization domain; keys and values cross threads.
extension HybridStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
