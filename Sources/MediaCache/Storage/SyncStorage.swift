import Dispatch
import Foundation

/// The synchronous API over a ``HybridStorage``.
///
/// Every call runs in the hybrid storage's one serialization domain (the
/// same one ``AsyncStorage`` uses), re-entrantly: calling it from an
/// observer or an async completion does not deadlock.
public final class SyncStorage<Key: Hashable, Value> {
    /// The storage it forwards to.
    public let innerStorage: HybridStorage<Key, Value>
    /// The queue of the serialization domain. A queue passed to
    /// ``init(storage:serialQueue:)`` is kept for source compatibility; calls
    /// are serialized by the storage's domain either way.
    public let serialQueue: DispatchQueue

    /// Wraps `storage`.
    public init(storage: HybridStorage<Key, Value>, serialQueue: DispatchQueue) {
        self.innerStorage = storage
        self.serialQueue = serialQueue
    }

    /// A view for values of another type, in the same domain.
    public func transform<U>(transformer: Transformer<U>) -> SyncStorage<Key, U> {
        SyncStorage<Key, U>(storage: innerStorage.transform(transformer: transformer), serialQueue: serialQueue)
    }
}

extension SyncStorage: StorageAware {
    public var allKeys: [Key] { innerStorage.allKeys }
    public var allObjects: [Value] { innerStorage.allObjects }

    @inlinable
    public func entry(forKey key: Key) throws -> Entry<Value> {
        try innerStorage.entry(forKey: key)
    }

    @inlinable
    public func object(forKey key: Key) throws -> Value {
        try innerStorage.object(forKey: key)
    }

    @inlinable
    public func objectExists(forKey key: Key) -> Bool {
        innerStorage.objectExists(forKey: key)
    }

    public func removeObject(forKey key: Key) throws {
        try innerStorage.removeObject(forKey: key)
    }

    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        try innerStorage.setObject(object, forKey: key, expiry: expiry)
    }

    public func removeAll() throws {
        try innerStorage.removeAll()
    }

    public func removeExpiredObjects() throws {
        try innerStorage.removeExpiredObjects()
    }

    public func removeInMemoryObject(forKey key: Key) throws {
        try innerStorage.removeInMemoryObject(forKey: key)
    }
}

// Forwards to a ``HybridStorage``, whose state is only touched inside its serialization domain; keys and values cross threads.
extension SyncStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
