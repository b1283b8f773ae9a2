import Foundation

/// The memory tier: a least-recently-used cache with exact limits.
///
/// Unlike hyperoslo/Cache (an `NSCache` whose costs are always 0, and which
/// on Linux evicts the newest insert), ``MemoryConfig/countLimit`` and
/// ``MemoryConfig/totalCostLimit`` are enforced on every write by evicting
/// the least-recently-used objects. Thread-safe.
public final class MemoryStorage<Key: Hashable, Value> {
    /// The configuration.
    public let config: MemoryConfig
    @usableFromInline let cache: LRUCache<Key>
    @usableFromInline let transformer: Transformer<Value>?

    /// Makes an empty memory storage. With a `transformer`, an object costs
    /// the byte size of its transformed data; without one, it costs 1.
    public convenience init(config: MemoryConfig, transformer: Transformer<Value>? = nil) {
        self.init(
            config: config,
            cache: LRUCache(
                countLimit: Int(clamping: config.countLimit), totalCostLimit: Int(clamping: config.totalCostLimit)),
            transformer: transformer)
    }

    init(config: MemoryConfig, cache: LRUCache<Key>, transformer: Transformer<Value>?) {
        self.config = config
        self.cache = cache
        self.transformer = transformer
    }

    /// How many objects it holds.
    public var count: Int { cache.count }
    /// The total cost of the objects it holds.
    public var totalCost: Int { cache.totalCost }

    /// Stores `object` with an explicit `cost`. (MediaCache addition.)
    @inlinable
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil, cost: Int) {
        let expiry = expiry ?? config.expiry
        cache.set(.init(object: object, expiry: expiry.absoluteDate, cost: max(0, cost)), forKey: key)
    }

    /// Stores `object`; `expiry` `nil` uses ``MemoryConfig/expiry``.
    @inlinable
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) {
        setObject(object, forKey: key, expiry: expiry, cost: defaultCost(of: object))
    }

    @inlinable
    func setObject(_ object: Value, forKey key: LRUCache<Key>.HashedKey, absoluteExpiry: Date?, cost: Int) {
        cache.set(.init(object: object, expiry: absoluteExpiry, cost: max(0, cost)), forKey: key)
    }

    @usableFromInline
    func defaultCost(of object: Value) -> Int {
        guard let transformer, let data = try? transformer.toData(object) else { return 1 }
        return data.count
    }

    /// The unexpired object for `key`; a hit becomes the most recently used.
    /// - throws: ``StorageError/notFound`` when missing or expired, or
    ///   ``StorageError/typeNotMatch`` when the memory tier holds a value
    ///   of another type for the key.
    ///
    /// The same answer as ``StorageAware``'s `object(forKey:)` (through
    /// ``entry(forKey:)``), without making an ``Entry``, and specialized in
    /// the caller's module: a generic call across modules looks up type
    /// metadata at run time on every get.
    @inlinable
    public func object(forKey key: Key) throws -> Value {
        guard let capsule = cache.capsule(forKey: key) else { throw StorageError.notFound }
        guard let object = capsule.object as? Value else { throw StorageError.typeNotMatch }
        guard !capsule.isExpired(at: Date()) else { throw StorageError.notFound }
        return object
    }

    /// The entry for `key`, expired or not; a hit becomes the most recently used.
    /// - throws: ``StorageError/notFound``, or ``StorageError/typeNotMatch``
    ///   when the memory tier holds a value of another type for the key.
    @inlinable
    public func entry(forKey key: Key) throws -> Entry<Value> {
        guard let capsule = cache.capsule(forKey: key) else { throw StorageError.notFound }
        guard let object = capsule.object as? Value else { throw StorageError.typeNotMatch }
        return Entry(object: object, expiry: Expiry(absoluteDate: capsule.expiry), filePath: nil)
    }

    /// Removes the object for `key`.
    @inlinable
    public func removeObject(forKey key: Key) {
        cache.remove(forKey: key)
    }

    /// Removes the object for `key` (the memory tier is all there is).
    @inlinable
    public func removeInMemoryObject(forKey key: Key) throws {
        cache.remove(forKey: key)
    }

    /// Removes the object for `key` when it has expired.
    public func removeObjectIfExpired(forKey key: Key) {
        if let capsule = cache.capsule(forKey: key, touch: false), capsule.isExpired(at: Date()) {
            cache.remove(forKey: key)
        }
    }

    /// Removes every object.
    public func removeAll() {
        cache.removeAll()
    }

    /// Removes every expired object.
    public func removeExpiredObjects() {
        cache.removeExpired()
    }

    /// Keys holding an unexpired object of this type, most recently used first.
    public var allKeys: [Key] {
        let now = Date()
        return cache.keys.filter { key in
            guard let capsule = cache.capsule(forKey: key, touch: false) else { return false }
            return !capsule.isExpired(at: now) && capsule.object is Value
        }
    }

    /// Every unexpired object of this type, most recently used first.
    public var allObjects: [Value] {
        let now = Date()
        return cache.keys.compactMap { key in
            guard let capsule = cache.capsule(forKey: key, touch: false), !capsule.isExpired(at: now) else {
                return nil
            }
            return capsule.object as? Value
        }
    }

    /// A view of the same memory tier for values of another type.
    /// Unlike upstream (a fresh, empty cache), the objects are shared.
    public func transform<U>(transformer: Transformer<U>? = nil) -> MemoryStorage<Key, U> {
        MemoryStorage<Key, U>(config: config, cache: cache, transformer: transformer)
    }
}

extension MemoryStorage: StorageAware {}

// Its state is the lock-guarded ``LRUCache``; keys and values cross threads.
extension MemoryStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
