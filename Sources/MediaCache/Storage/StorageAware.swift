import Foundation

/// The synchronous storage API shared by every layer (hyperoslo/Cache's
/// `StorageAware`).
public protocol StorageAware {
    associatedtype Key: Hashable
    associatedtype Value

    /// Keys that hold an unexpired object, in every tier.
    var allKeys: [Key] { get }
    /// Every unexpired object, in every tier.
    var allObjects: [Value] { get }

    /// The unexpired object for `key`.
    /// - throws: ``StorageError/notFound`` when missing or expired.
    func object(forKey key: Key) throws -> Value
    /// The entry for `key`, also when it has expired (check `entry.expiry`).
    /// - throws: ``StorageError/notFound`` when missing.
    func entry(forKey key: Key) throws -> Entry<Value>
    /// Removes the object for `key`; a missing key is not an error.
    func removeObject(forKey key: Key) throws
    /// Writes `object` for `key`; `expiry` `nil` uses the configured expiry.
    func setObject(_ object: Value, forKey key: Key, expiry: Expiry?) throws
    /// Whether an unexpired object exists for `key`.
    func objectExists(forKey key: Key) -> Bool
    /// Removes every object.
    func removeAll() throws
    /// Removes expired objects.
    func removeExpiredObjects() throws
    /// Removes the object for `key` from the memory tier only.
    func removeInMemoryObject(forKey key: Key) throws
}

extension StorageAware {
    @inlinable
    public func object(forKey key: Key) throws -> Value {
        let entry = try entry(forKey: key)
        guard !entry.expiry.isExpired else { throw StorageError.notFound }
        return entry.object
    }

    @inlinable
    public func objectExists(forKey key: Key) -> Bool {
        (try? object(forKey: key)) != nil
    }

    /// Whether an object exists for `key`; never throws.
    @available(*, deprecated, renamed: "objectExists(forKey:)")
    public func existsObject(forKey key: Key) throws -> Bool {
        objectExists(forKey: key)
    }

    /// Whether the entry for `key` has expired; `true` when there is no
    /// readable entry (as upstream). Never throws.
    public func isExpiredObject(forKey key: Key) throws -> Bool {
        do {
            return try entry(forKey: key).expiry.isExpired
        } catch {
            return true
        }
    }
}
