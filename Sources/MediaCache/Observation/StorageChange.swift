/// A change to a storage, as seen by storage observers.
public enum StorageChange<Key: Hashable>: Equatable {
    /// An object was written for `key`.
    case add(key: Key)
    /// The object for `key` was removed.
    case remove(key: Key)
    /// Every object was removed.
    case removeAll
    /// Expired objects were removed.
    case removeExpired
    /// The object for `key` was removed from the memory tier only.
    case removeInMemory(key: Key)
}

extension StorageChange: Sendable where Key: Sendable {}
