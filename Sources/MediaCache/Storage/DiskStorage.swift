import Foundation
import MediaStore

/// The disk tier: one `MediaStore` in `directory/name`.
///
/// Values are stored as their transformer's bytes, keys as stable strings
/// (see <doc:GettingStarted>), expiry as an absolute date. ``DiskConfig/maxSize``
/// becomes the store's size limit, enforced on every write by evicting
/// least-recently-used entries; a ``HybridStorage`` over it hears about
/// those evictions (and expiry sweeps) through the store's removal handler,
/// shared by every storage on the store. Thread-safe.
public final class DiskStorage<Key: Hashable, Value> {
    /// The configuration.
    public let config: DiskConfig
    /// Kept for source compatibility; the store manages its own files.
    public let fileManager: FileManager
    /// The store's directory.
    public let path: String
    /// The store, or why it could not be opened.
    @usableFromInline let opened: Result<MediaStore, StorageError>
    /// The store of ``opened``, for reads that must not retain it (see
    /// ``withStore(_:)``); `opened` keeps it alive.
    @usableFromInline let unretainedStore: Unmanaged<MediaStore>?
    @usableFromInline let transformer: Transformer<Value>

    /// Opens (creating when needed) the store in
    /// `config.directory ?? cachesDirectory` + `config.name`.
    ///
    /// - throws: the ``StorageError`` the store could not be opened with
    ///   (``StorageError/store(_:)`` with the engine's reason).
    public convenience init(
        config: DiskConfig, fileManager: FileManager = .default, transformer: Transformer<Value>
    ) throws {
        let base =
            config.directory ?? fileManager.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? fileManager.temporaryDirectory
        let url = base.appendingPathComponent(config.name, isDirectory: true)
        self.init(config: config, fileManager: fileManager, path: url.path, transformer: transformer)
        if case .failure(let error) = opened { throw error }
    }

    /// Opens (creating when needed) the store at `path`.
    ///
    /// Does not throw, like hyperoslo/Cache's: when the store cannot be
    /// opened (an unwritable folder, a file that is not a store, a store of
    /// a newer format, ...) every operation that reads or writes throws the
    /// ``StorageError`` it failed with, normally ``StorageError/store(_:)``
    /// carrying the engine's `StoreError`; ``allKeys`` and ``allObjects``
    /// are empty, ``objectExists(forKey:)`` is `false` and ``totalSize`` is
    /// `nil`. The open is not retried: make a new storage.
    public init(
        config: DiskConfig, fileManager: FileManager = .default, path: String, transformer: Transformer<Value>
    ) {
        let configuration = StoreConfiguration(
            sizeLimit: Int(clamping: config.maxSize), sizeAccounting: .logical,
            countLimit: Int(clamping: config.countLimit),
            compressionLevel: config.compressionLevel)
        do {
            self.opened = .success(
                try MediaStore.shared(
                    directory: URL(fileURLWithPath: path, isDirectory: true), configuration: configuration))
        } catch {
            self.opened = .failure(StorageError(error))
        }
        self.unretainedStore = try? Unmanaged.passUnretained(opened.get())
        self.config = config
        self.fileManager = fileManager
        self.path = path
        self.transformer = transformer
        #if canImport(Darwin)
            if let protectionType = config.protectionType {
                try? fileManager.setAttributes([.protectionKey: protectionType], ofItemAtPath: path)
            }
        #endif
    }

    init(sharing other: DiskStorage<Key, some Any>, transformer: Transformer<Value>) {
        self.config = other.config
        self.fileManager = other.fileManager
        self.path = other.path
        self.opened = other.opened
        self.unretainedStore = other.unretainedStore
        self.transformer = transformer
    }

    /// The engine underneath. (MediaCache addition.)
    ///
    /// - throws: the ``StorageError`` the store could not be opened with.
    @inlinable
    public var store: MediaStore {
        get throws(StorageError) { try opened.get() }
    }

    /// Bytes the store occupies (after compression and deduplication);
    /// `nil` when the store could not be opened.
    public var totalSize: Int? {
        try? store.statistics().storedBytes
    }

    // MARK: Bytes

    @inlinable
    func storeKey(_ key: Key) -> String { KeyCoder.encode(key) }

    static func policy(_ expiry: Expiry) -> ExpiryPolicy {
        switch expiry {
        case .never: .never
        case .seconds(let seconds): .after(seconds)
        case .date(let date): .at(date)
        }
    }

    /// The stored bytes and absolute expiry for `key`, expired or not,
    /// in one read transaction.
    @inlinable
    func rawEntry(forKey key: Key) throws -> (data: Data, expiry: Date?)? {
        try storedEntry(forKey: key, includeExpired: true)
    }

    /// The bytes and absolute expiry of the unexpired entry for `key`,
    /// in one read transaction.
    @inlinable
    func liveEntry(forKey key: Key) throws -> (data: Data, expiry: Date?)? {
        try storedEntry(forKey: key, includeExpired: false)
    }

    @inlinable
    func storedEntry(forKey key: Key, includeExpired: Bool) throws -> (data: Data, expiry: Date?)? {
        try withStore { store -> (data: Data, expiry: Date?)? in
            do throws(StoreError) {
                return try store.value(forKey: storeKey(key), includeExpired: includeExpired)
            } catch {
                throw StorageError(error)
            }
        }
    }

    /// Runs `body` with the store, without retaining it: `MediaStore.shared`
    /// holds stores weakly, so a store's reference count lives in a side
    /// table, where each retain and release takes the runtime's slow path
    /// (the pair was about 3% of a facade get of 1 KiB).
    /// - throws: the ``StorageError`` the store could not be opened with.
    @inlinable
    func withStore<R>(_ body: (MediaStore) throws -> R) throws -> R {
        guard let unretainedStore else {
            if case .failure(let error) = opened { throw error }
            preconditionFailure("an opened store is kept unretained")
        }
        return try unretainedStore._withUnsafeGuaranteedRef(body)
    }

    /// Stores `data`; returns the absolute expiry it got.
    @discardableResult
    func setData(_ data: Data, forKey key: Key, expiry: Expiry?) throws -> Date? {
        let store = try self.store
        do {
            let info = try store.put(
                data, forKey: storeKey(key),
                options: WriteOptions(expiry: Self.policy(expiry ?? config.expiry), cost: data.count))
            return info.expiry
        } catch {
            throw StorageError(error)
        }
    }

    /// Removes the entry; returns whether there was one.
    @discardableResult
    func removeData(forKey key: Key) throws -> Bool {
        let store = try self.store
        do {
            return try store.remove(forKey: storeKey(key))
        } catch {
            throw StorageError(error)
        }
    }

    @inlinable
    func decode(_ data: Data) throws -> Value {
        try transformer.fromData(data)
    }

    // MARK: StorageAware

    /// The entry for `key`, also when expired; ``Entry/filePath`` is the store's directory.
    @inlinable
    public func entry(forKey key: Key) throws -> Entry<Value> {
        guard let raw = try rawEntry(forKey: key) else { throw StorageError.notFound }
        return Entry(object: try decode(raw.data), expiry: Expiry(absoluteDate: raw.expiry), filePath: path)
    }

    /// The unexpired object for `key`, in one read transaction.
    @inlinable
    public func object(forKey key: Key) throws -> Value {
        guard let live = try liveEntry(forKey: key) else { throw StorageError.notFound }
        return try decode(live.data)
    }

    /// Whether an unexpired entry exists for `key` (without reading or decoding it).
    @inlinable
    public func objectExists(forKey key: Key) -> Bool {
        guard case .success(let store) = opened else { return false }
        return (try? store.contains(storeKey(key))) ?? false
    }

    /// Stores `object`; `expiry` `nil` uses ``DiskConfig/expiry``.
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        try setData(try transformer.toData(object), forKey: key, expiry: expiry)
    }

    /// Removes the entry for `key`; a missing key is not an error.
    public func removeObject(forKey key: Key) throws {
        try removeData(forKey: key)
    }

    /// Removes every entry.
    public func removeAll() throws {
        let store = try self.store
        do { try store.removeAll() } catch { throw StorageError(error) }
    }

    /// Removes every expired entry.
    public func removeExpiredObjects() throws {
        let store = try self.store
        do { try store.removeExpired() } catch { throw StorageError(error) }
    }

    /// Does nothing: the disk tier has no memory.
    public func removeInMemoryObject(forKey key: Key) throws {}

    /// Keys of every unexpired entry that can be decoded back to `Key`.
    public var allKeys: [Key] {
        guard case .success(let store) = opened, let entries = try? store.entries() else { return [] }
        let now = Date()
        return entries.compactMap { info in
            guard info.isComplete, !info.isExpired(at: now) else { return nil }
            return KeyCoder.decode(info.key, as: Key.self)
        }
    }

    /// Every unexpired object that decodes as `Value`.
    public var allObjects: [Value] {
        allKeys.compactMap { try? object(forKey: $0) }
    }

    /// A view of the same store for values of another type.
    public func transform<U>(transformer: Transformer<U>) -> DiskStorage<Key, U> {
        DiskStorage<Key, U>(sharing: self, transformer: transformer)
    }
}

extension DiskStorage: StorageAware {}

// Immutable apart from the store, which is thread-safe; keys and values cross threads.
extension DiskStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
