import Dispatch
import Foundation
import MediaStore
import MediaSupport

/// A key/value cache with a memory tier and a disk tier, source-compatible
/// with hyperoslo/Cache 7.x.
///
/// ```swift
/// let storage = try Storage<String, User>(
///     diskConfig: DiskConfig(name: "Floppy"),
///     memoryConfig: MemoryConfig(expiry: .never, countLimit: 10, totalCostLimit: 10),
///     transformer: TransformerFactory.forCodable(ofType: User.self))
/// try storage.setObject(user, forKey: "user")
/// let cached = try storage.object(forKey: "user")
/// ```
///
/// The sync API (this class), ``async`` and observer registration share one
/// serialization domain, so they may be mixed from any thread.
public final class Storage<Key: Hashable, Value> {
    /// The two tiers.
    public let hybridStorage: HybridStorage<Key, Value>
    /// The synchronous API this class forwards to.
    public let syncStorage: SyncStorage<Key, Value>
    /// The asynchronous API, in the same serialization domain.
    ///
    /// Settable, as upstream's `lazy var` is; reading and replacing it are
    /// thread-safe.
    public var async: AsyncStorage<Key, Value> {
        get { asyncStorage.current }
        set { asyncStorage.withLock { $0 = newValue } }
    }
    private let asyncStorage: Locked<AsyncStorage<Key, Value>>

    /// Opens the disk store (creating it when needed) and an empty memory tier.
    public convenience init(
        diskConfig: DiskConfig, memoryConfig: MemoryConfig, fileManager: FileManager = .default,
        transformer: Transformer<Value>
    ) throws {
        let disk = try DiskStorage<Key, Value>(config: diskConfig, fileManager: fileManager, transformer: transformer)
        let memory = MemoryStorage<Key, Value>(config: memoryConfig, transformer: transformer)
        self.init(hybridStorage: HybridStorage(memoryStorage: memory, diskStorage: disk))
    }

    /// Wraps `hybridStorage`; sync and async calls share its domain.
    public init(hybridStorage: HybridStorage<Key, Value>) {
        self.hybridStorage = hybridStorage
        self.syncStorage = SyncStorage(storage: hybridStorage, serialQueue: hybridStorage.domain.queue)
        self.asyncStorage = Locked(AsyncStorage(storage: hybridStorage, serialQueue: hybridStorage.domain.queue))
    }

    /// Bytes the disk tier occupies (after compression and deduplication).
    public var totalDiskStorageSize: Int? {
        hybridStorage.totalDiskStorageSize
    }
}

extension Storage: StorageAware {
    /// Keys of every unexpired object, on disk or in memory.
    public var allKeys: [Key] { syncStorage.allKeys }
    /// Every unexpired object, on disk or in memory.
    public var allObjects: [Value] { syncStorage.allObjects }

    /// The entry for `key`, also when expired (check ``Entry/expiry``).
    /// - throws: ``StorageError/notFound`` when missing.
    @inlinable
    public func entry(forKey key: Key) throws -> Entry<Value> {
        try syncStorage.entry(forKey: key)
    }

    /// The unexpired object for `key`.
    /// - throws: ``StorageError/notFound`` when missing or expired.
    @inlinable
    public func object(forKey key: Key) throws -> Value {
        try syncStorage.object(forKey: key)
    }

    /// Whether an unexpired object exists for `key`.
    @inlinable
    public func objectExists(forKey key: Key) -> Bool {
        syncStorage.objectExists(forKey: key)
    }

    /// Removes the object for `key`; a missing key is not an error.
    public func removeObject(forKey key: Key) throws {
        try syncStorage.removeObject(forKey: key)
    }

    /// Writes `object` for `key`; `expiry` `nil` uses the configured expiries.
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        try syncStorage.setObject(object, forKey: key, expiry: expiry)
    }

    /// Removes every object.
    public func removeAll() throws {
        try syncStorage.removeAll()
    }

    /// Removes expired objects.
    public func removeExpiredObjects() throws {
        try syncStorage.removeExpiredObjects()
    }

    /// Removes the object for `key` from memory only.
    public func removeInMemoryObject(forKey key: Key) throws {
        try syncStorage.removeInMemoryObject(forKey: key)
    }
}

extension Storage: StorageObservationRegistry {
    /// Registers `observer` (held weakly) for every change of the storage,
    /// including changes made through its transformed views.
    @discardableResult
    public func addStorageObserver<O: AnyObject>(
        _ observer: O, closure: @escaping (O, Storage, StorageChange<Key>) -> Void
    ) -> ObservationToken {
        hybridStorage.addStorageObserver(observer) { [weak self] observer, _, change in
            guard let self else { return }
            closure(observer, self, change)
        }
    }

    /// Removes every storage observer.
    public func removeAllStorageObservers() {
        hybridStorage.removeAllStorageObservers()
    }
}

extension Storage: KeyObservationRegistry {
    /// Registers `observer` (held weakly) for changes of `key`.
    @discardableResult
    public func addObserver<O: AnyObject>(
        _ observer: O, forKey key: Key, closure: @escaping (O, Storage, KeyChange<Value>) -> Void
    ) -> ObservationToken {
        hybridStorage.addObserver(observer, forKey: key) { [weak self] observer, _, change in
            guard let self else { return }
            closure(observer, self, change)
        }
    }

    /// Removes the observers of `key`.
    public func removeObserver(forKey key: Key) {
        hybridStorage.removeObserver(forKey: key)
    }

    /// Removes every key observer.
    public func removeAllKeyObservers() {
        hybridStorage.removeAllKeyObservers()
    }
}

// Every access to mutable state runs inside the storage's serialization domain (``SerialDomain``); keys and values cross threads, so both must be Sendable.
extension Storage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
