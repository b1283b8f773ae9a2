import Dispatch
import Foundation
import MediaCache
import Testing

/// hyperoslo/Cache 7.x's whole public API (the 225-line symbol graph of
/// the Linux build, Image APIs aside), called the way users call it: every
/// public initialiser and method, with and without its default arguments.
/// Only `import MediaCache` (no `@testable`), so this file compiles against
/// Cache itself with `import Cache`, except where a comment says otherwise.
@Suite struct PublicAPISurfaceTests {
    struct Song: Codable, Equatable {
        var title: String
    }

    final class Listener {
        var storageChanges = 0
        var keyChanges = 0
    }

    /// Generic code over Cache's protocols compiles with our types.
    func roundTrip<S: StorageAware>(_ storage: S, _ value: S.Value, forKey key: S.Key) throws -> S.Value {
        try storage.setObject(value, forKey: key, expiry: nil)
        return try storage.object(forKey: key)
    }

    func observe<R: StorageObservationRegistry>(_ registry: R, _ listener: Listener) -> ObservationToken {
        registry.addStorageObserver(listener) { listener, _, _ in listener.storageChanges += 1 }
    }

    func observe<R: KeyObservationRegistry>(_ registry: R, key: R.S.Key, _ listener: Listener) -> ObservationToken {
        registry.addObserver(listener, forKey: key) { listener, _, _ in listener.keyChanges += 1 }
    }

    @Test func configurationAndValueTypes() throws {
        let temp = ScratchDirectory()
        // DiskConfig: every argument, then only the required one.
        let full = DiskConfig(
            name: "Full", expiry: .seconds(60), maxSize: 10_000, directory: temp.url, protectionType: nil)
        let minimal = DiskConfig(name: "Minimal")
        #expect(full.name == "Full" && full.maxSize == 10_000 && full.directory == temp.url)
        #expect(full.protectionType == nil && minimal.directory == nil)
        if case .never = minimal.expiry {} else { Issue.record("default disk expiry is not .never") }

        let memory = MemoryConfig(expiry: .date(Date()), countLimit: 3, totalCostLimit: 9)
        let defaultMemory = MemoryConfig()
        #expect(memory.countLimit == 3 && memory.totalCostLimit == 9)
        #expect(defaultMemory.countLimit == 0 && defaultMemory.totalCostLimit == 0)

        // Expiry.
        let expiries: [Expiry] = [.never, .seconds(10), .date(Date(timeIntervalSinceNow: -1))]
        #expect(expiries.map(\.isExpired) == [false, false, true])
        #expect(Expiry.never.date == Date(timeIntervalSince1970: 60 * 60 * 24 * 365 * 68))

        // Transformer and TransformerFactory.
        let custom = Transformer<Int>(
            toData: { Data(String($0).utf8) }, fromData: { Int(String(decoding: $0, as: UTF8.self)) ?? -1 })
        let data: Transformer<Data> = TransformerFactory.forData()
        let codable: Transformer<Song> = TransformerFactory.forCodable(ofType: Song.self)
        _ = (custom, data, codable)

        // TypeWrapper, the JSON helpers, MD5, Optional, FileManager.
        let wrapped = TypeWrapper<Song>(object: Song(title: "A"))
        let encoded = try JSONEncoder().encode(wrapped)
        #expect(try JSONDecoder.decode(encoded, to: TypeWrapper<Song>.self).object == wrapped.object)
        #expect(try JSONDecoder.decode(#"{"title":"B"}"#, to: Song.self).title == "B")
        #expect(try JSONDecoder.decode(["title": "C"], to: Song.self).title == "C")
        let dictionary: JSONDictionary = ["a": 1]
        let array: JSONArray = [dictionary]
        _ = JSONDictionaryWrapper(jsonDictionary: dictionary)
        _ = JSONArrayWrapper(jsonArray: array)
        #expect(MD5("") == "D41D8CD98F00B204E9800998ECF8427E")
        let present: Int? = 4
        #expect(try present.unwrapOrThrow(error: StorageError.notFound) == 4)
        let absent: Int? = nil
        #expect(throws: StorageError.self) { try absent.unwrapOrThrow(error: StorageError.notFound) }
        try FileManager.default.createDirectory(at: temp.url, withIntermediateDirectories: true)
        try Data(count: 100).write(to: temp.url.appendingPathComponent("f"))
        #expect(FileManager.default.sizeOfDirectory(at: temp.url) ?? 0 > 0)

        // StorageError: the seven upstream cases. (MediaCache has three
        // more, so a switch over it needs `default`; see MediaCache.docc/GettingStarted.md.)
        let errors: [StorageError] = [
            .notFound, .typeNotMatch, .malformedFileAttributes, .decodingFailed, .encodingFailed, .deallocated,
            .transformerFail,
        ]
        for error in errors {
            switch error {
            case .notFound, .typeNotMatch, .malformedFileAttributes, .decodingFailed, .encodingFailed,
                .deallocated, .transformerFail:
                break
            default: Issue.record("unexpected \(error)")
            }
        }

        // Changes.
        let changes: [StorageChange<String>] = [
            .add(key: "k"), .remove(key: "k"), .removeAll, .removeExpired, .removeInMemory(key: "k"),
        ]
        #expect(changes[0] == .add(key: "k") && changes[0] != .remove(key: "k"))
        let edit = KeyChange<Int>.edit(before: nil, after: 1)
        #expect(edit == .edit(before: nil, after: 1) && edit != .remove)

        // Not called here because they are deprecated (a warning): the
        // `existsObject(forKey:)` variants and `ExpirationMode`, which
        // upstream never uses; both exist.
    }

    @Test func memoryStorage() throws {
        let memory = MemoryStorage<String, Int>(config: MemoryConfig())
        memory.setObject(1, forKey: "a")
        memory.setObject(2, forKey: "b", expiry: .date(Date(timeIntervalSinceNow: -1)))
        #expect(try memory.entry(forKey: "a").object == 1)
        #expect(try memory.object(forKey: "a") == 1)
        #expect(memory.objectExists(forKey: "a"))
        #expect(try memory.isExpiredObject(forKey: "b"))
        memory.removeObjectIfExpired(forKey: "b")
        #expect(!memory.allKeys.contains("b"))
        #expect(memory.allObjects == [1])
        memory.removeObject(forKey: "a")
        try memory.removeInMemoryObject(forKey: "a")
        memory.removeExpiredObjects()
        memory.removeAll()
        #expect(memory.allKeys.isEmpty)
        let other: MemoryStorage<String, String> = memory.transform()
        #expect(other.allKeys.isEmpty)
        #expect(try roundTrip(memory, 5, forKey: "g") == 5)
    }

    @Test func diskStorage() throws {
        let temp = ScratchDirectory()
        let config = DiskConfig(name: "Disk", directory: temp.url)
        let transformer = TransformerFactory.forCodable(ofType: Song.self)
        // Both initialisers, with and without `fileManager`.
        let disk = try DiskStorage<String, Song>(config: config, transformer: transformer)
        let disk2 = try DiskStorage<String, Song>(config: config, fileManager: .default, transformer: transformer)
        let path = temp.url.appendingPathComponent("Disk").path
        let atPath = DiskStorage<String, Song>(config: config, path: path, transformer: transformer)
        let atPath2 = DiskStorage<String, Song>(
            config: config, fileManager: FileManager.default, path: path, transformer: transformer)
        #expect(disk.path == path && disk2.path == path && atPath.path == path && atPath2.path == path)
        #expect(disk.fileManager === FileManager.default)

        try disk.setObject(Song(title: "x"), forKey: "k")
        try disk.setObject(Song(title: "y"), forKey: "k2", expiry: .seconds(100))
        #expect(try atPath.entry(forKey: "k").object.title == "x")
        #expect(try atPath.object(forKey: "k2").title == "y")
        #expect(atPath2.objectExists(forKey: "k"))
        #expect(try !atPath2.isExpiredObject(forKey: "k"))
        #expect(disk.totalSize != nil)
        #expect(Set(disk.allKeys) == ["k", "k2"])
        #expect(disk.allObjects.count == 2)
        try disk.removeObject(forKey: "k")
        try disk.removeInMemoryObject(forKey: "k2")
        try disk.removeExpiredObjects()
        let raw: DiskStorage<String, Data> = disk.transform(transformer: TransformerFactory.forData())
        #expect(raw.objectExists(forKey: "k2"))
        try disk.removeAll()
        #expect(!raw.objectExists(forKey: "k2"))
    }

    @Test func hybridSyncAndStorage() throws {
        let temp = ScratchDirectory()
        let transformer = TransformerFactory.forCodable(ofType: Song.self)
        let disk = try DiskStorage<String, Song>(
            config: DiskConfig(name: "H", directory: temp.url), transformer: transformer)
        let memory = MemoryStorage<String, Song>(config: MemoryConfig())
        let hybrid = HybridStorage(memoryStorage: memory, diskStorage: disk)
        #expect(hybrid.memoryStorage === memory && hybrid.diskStorage === disk)
        try hybrid.setObject(Song(title: "h"), forKey: "k")
        try hybrid.setObject(Song(title: "i"), forKey: "j", expiry: .never)
        #expect(try hybrid.entry(forKey: "k").object.title == "h")
        #expect(try hybrid.object(forKey: "j").title == "i")
        #expect(hybrid.objectExists(forKey: "k") && hybrid.totalDiskStorageSize != nil)
        #expect(Set(hybrid.allKeys) == ["k", "j"] && hybrid.allObjects.count == 2)
        try hybrid.removeInMemoryObject(forKey: "k")
        try hybrid.removeObject(forKey: "j")
        try hybrid.removeExpiredObjects()
        let listener = Listener()
        let token = observe(hybrid, listener)
        let keyToken = observe(hybrid, key: "k", listener)
        hybrid.addStorageObserver(listener) { _, _, _ in }  // discardable
        hybrid.addObserver(listener, forKey: "k") { _, _, _ in }
        try hybrid.removeAll()
        #expect(listener.storageChanges == 1 && listener.keyChanges == 1)
        token.cancel()
        keyToken.cancel()
        hybrid.removeAllStorageObservers()
        hybrid.removeObserver(forKey: "k")
        hybrid.removeAllKeyObservers()
        let dataHybrid: HybridStorage<String, Data> = hybrid.transform(transformer: TransformerFactory.forData())
        #expect(dataHybrid.allKeys.isEmpty)

        // SyncStorage over it, with its own queue as upstream lets you.
        let sync = SyncStorage(storage: hybrid, serialQueue: DispatchQueue(label: "Sync"))
        #expect(sync.innerStorage === hybrid)
        _ = sync.serialQueue
        #expect(try roundTrip(sync, Song(title: "s"), forKey: "s").title == "s")
        try sync.setObject(Song(title: "t"), forKey: "t")
        #expect(try sync.entry(forKey: "t").object.title == "t")
        #expect(sync.objectExists(forKey: "t") && !sync.allKeys.isEmpty && !sync.allObjects.isEmpty)
        try sync.removeInMemoryObject(forKey: "t")
        try sync.removeObject(forKey: "t")
        try sync.removeExpiredObjects()
        try sync.removeAll()
        let syncData: SyncStorage<String, Data> = sync.transform(transformer: TransformerFactory.forData())
        #expect(syncData.allKeys.isEmpty)

        // Storage: both initialisers, with and without `fileManager`.
        let memoryConfig = MemoryConfig(expiry: .never, countLimit: 10, totalCostLimit: 10)
        let storage = try Storage<String, Song>(
            diskConfig: DiskConfig(name: "S", directory: temp.url), memoryConfig: memoryConfig, transformer: transformer
        )
        _ = try Storage<String, Song>(
            diskConfig: DiskConfig(name: "S", directory: temp.url), memoryConfig: memoryConfig,
            fileManager: FileManager.default, transformer: transformer)
        _ = Storage<String, Song>(hybridStorage: hybrid)
        try storage.setObject(Song(title: "a"), forKey: "a")
        try storage.setObject(Song(title: "b"), forKey: "b", expiry: .seconds(-1))
        #expect(try storage.entry(forKey: "b").expiry.isExpired)
        #expect(try storage.isExpiredObject(forKey: "b"))
        #expect(try storage.object(forKey: "a").title == "a")
        #expect(storage.objectExists(forKey: "a") && storage.totalDiskStorageSize != nil)
        #expect(storage.allKeys == ["a"] && storage.allObjects == [Song(title: "a")])
        try storage.removeInMemoryObject(forKey: "a")
        try storage.removeExpiredObjects()
        try storage.removeObject(forKey: "a")
        let storageToken = storage.addStorageObserver(listener) { listener, storage, change in
            _ = storage.allKeys
            if change == .removeAll { listener.storageChanges += 1 }
        }
        let storageKeyToken = storage.addObserver(listener, forKey: "a") { listener, _, change in
            if case .remove = change { listener.keyChanges += 1 }
        }
        try storage.removeAll()
        #expect(listener.storageChanges == 2 && listener.keyChanges == 2)
        storageToken.cancel()
        storageKeyToken.cancel()
        storage.removeAllStorageObservers()
        storage.removeObserver(forKey: "a")
        storage.removeAllKeyObservers()
        let songs: Storage<String, [Song]> = storage.transform(
            transformer: TransformerFactory.forCodable(ofType: [Song].self))
        let bytes: Storage<String, Data> = storage.transformData()
        let numbers: Storage<String, Int> = storage.transformCodable(ofType: Int.self)
        try numbers.setObject(3, forKey: "n")
        #expect(try bytes.object(forKey: "n").isEmpty == false)
        #expect(songs.allKeys == ["n"])
        #expect(try roundTrip(storage, Song(title: "r"), forKey: "r").title == "r")
    }

    @Test func asyncStorage() async throws {
        let temp = ScratchDirectory()
        let storage = try Storage<String, Song>(
            diskConfig: DiskConfig(name: "A", directory: temp.url), memoryConfig: MemoryConfig(),
            transformer: TransformerFactory.forCodable(ofType: Song.self))
        storage.async = storage.async  // upstream's `lazy var` is settable
        let async = storage.async
        #expect(async.innerStorage === storage.hybridStorage)  // `hybridStorage`: a MediaCache addition
        _ = async.serialQueue
        _ = AsyncStorage(storage: storage.hybridStorage, serialQueue: DispatchQueue(label: "Async"))

        // Completion-handler API, in call order.
        let results = await withCheckedContinuation { (continuation: CheckedContinuation<[Bool], Never>) in
            async.setObject(Song(title: "a"), forKey: "a") { _ in }
            async.setObject(Song(title: "b"), forKey: "b", expiry: .never) { _ in }
            async.entry(forKey: "a") { _ in }
            async.object(forKey: "a") { _ in }
            async.removeObject(forKey: "b") { _ in }
            async.removeExpiredObjects { _ in }
            async.objectExists(forKey: "a") { result in
                let exists = (try? result.get()) ?? false
                async.removeAll { result in
                    continuation.resume(returning: [exists, (try? result.get()) != nil])
                }
            }
        }
        #expect(results == [true, true])

        // async/await API.
        try await async.setObject(Song(title: "c"), forKey: "c")
        try await async.setObject(Song(title: "d"), forKey: "d", expiry: .seconds(60))
        #expect(try await async.entry(forKey: "c").object.title == "c")
        #expect(try await async.object(forKey: "d").title == "d")
        #expect(try await async.objectExists(forKey: "d"))
        try await async.removeObject(forKey: "c")
        try await async.removeExpiredObjects()
        try await async.removeAll()
        let asyncData: AsyncStorage<String, Data> = async.transform(transformer: TransformerFactory.forData())
        #expect(try await !asyncData.objectExists(forKey: "d"))
    }
}
