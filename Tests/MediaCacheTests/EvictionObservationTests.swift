import Foundation
import Testing

@testable import MediaCache
@testable import MediaStore

/// Entries the engine removes by itself (LRU eviction under `countLimit` or
/// `maxSize`, expiry sweeps) reach key and storage observers and leave the
/// memory tier, also when another storage on the same store caused them.
@Suite struct EvictionObservationTests {
    private func makeCounted(
        _ temp: TempDirectory, countLimit: UInt = 3, name: String = "Counted"
    ) throws -> Storage<String, Int> {
        try Storage<String, Int>(
            diskConfig: DiskConfig(name: name, directory: temp.url, countLimit: countLimit),
            memoryConfig: MemoryConfig(), transformer: TransformerFactory.forCodable(ofType: Int.self))
    }

    /// Keys of `keys` whose entry the store no longer has.
    private func gone(_ keys: [String], from storage: Storage<String, Int>) throws -> [String] {
        try keys.filter { try storage.hybridStorage.diskStorage.store.info(forKey: $0) == nil }
    }

    @Test func countLimitEvictionNotifiesBeforeSetObjectReturns() throws {
        let temp = TempDirectory()
        let storage = try makeCounted(temp)
        let observer = NSObject()
        let changes = Recorder<StorageChange<String>>()
        let first = Recorder<KeyChange<Int>>()
        storage.addStorageObserver(observer) { _, _, change in changes.append(change) }
        storage.addObserver(observer, forKey: "k0") { _, _, change in first.append(change) }
        for index in 0..<4 { try storage.setObject(index, forKey: "k\(index)") }

        // 4 entries > 3: the store evicts least-recently-used down to 90%.
        let evicted = try gone(["k0", "k1", "k2", "k3"], from: storage)
        #expect(evicted == ["k0", "k1"])
        #expect(first.events == [.edit(before: nil, after: 0), .remove])
        #expect(
            changes.events == [
                .add(key: "k0"), .add(key: "k1"), .add(key: "k2"), .add(key: "k3"), .remove(key: "k0"),
                .remove(key: "k1"),
            ])
        // The memory tier (unlimited here) no longer serves them.
        #expect(storage.hybridStorage.memoryStorage.count == 2)
        #expect(isNotFound { _ = try storage.object(forKey: "k0") })
        #expect(!storage.objectExists(forKey: "k1"))
        #expect(try storage.object(forKey: "k3") == 3)
    }

    @Test func maxSizeEvictionMatchesTheStore() throws {
        let temp = TempDirectory()
        let storage = try makeStorage(
            in: temp, maxSize: 10_000, transformer: TransformerFactory.forData())
        let observer = NSObject()
        let removed = Recorder<String>()
        let keys = (0..<8).map { "track-\($0)" }
        for key in keys {
            storage.addObserver(observer, forKey: key) { _, _, change in
                if case .remove = change { removed.append(key) }
            }
        }
        for key in keys { try storage.setObject(Data(repeating: 7, count: 3_000), forKey: key) }

        let diskKeys = keys.filter { (try? storage.hybridStorage.diskStorage.store.info(forKey: $0)) != nil }
        let evicted = keys.filter { !diskKeys.contains($0) }
        #expect(!evicted.isEmpty)
        #expect(removed.events == evicted)
        #expect(Set(storage.hybridStorage.memoryStorage.allKeys) == Set(diskKeys))
        #expect(Set(storage.allKeys) == Set(diskKeys))
    }

    @Test func evictionCausedByAnotherStorageOnTheSameStore() throws {
        let temp = TempDirectory()
        let owner = try makeCounted(temp)
        let other = try makeCounted(temp)  // MediaStore.shared: the same store
        #expect(try owner.hybridStorage.diskStorage.store === other.hybridStorage.diskStorage.store)
        let observer = NSObject()
        let keyEvents = Recorder<KeyChange<Int>>()
        let changes = Recorder<StorageChange<String>>()
        owner.addObserver(observer, forKey: "mine") { _, _, change in keyEvents.append(change) }
        owner.addStorageObserver(observer) { _, _, change in changes.append(change) }
        try owner.setObject(1, forKey: "mine")
        #expect(owner.hybridStorage.memoryStorage.count == 1)

        for index in 0..<3 { try other.setObject(index, forKey: "theirs-\(index)") }
        // Delivered by a job on the owner's domain; any sync call waits for it.
        #expect(!owner.objectExists(forKey: "mine"))
        #expect(keyEvents.events == [.edit(before: nil, after: 1), .remove])
        #expect(changes.events == [.add(key: "mine"), .remove(key: "mine"), .remove(key: "theirs-0")])
        #expect(owner.hybridStorage.memoryStorage.count == 0)
    }

    @Test func aKeyWrittenAgainBeforeDeliveryIsNotReported() throws {
        let temp = TempDirectory()
        let owner = try makeCounted(temp)
        let other = try makeCounted(temp)
        let observer = NSObject()
        let keyEvents = Recorder<KeyChange<Int>>()
        owner.addObserver(observer, forKey: "k") { _, _, change in keyEvents.append(change) }
        try owner.setObject(1, forKey: "k")

        // Hold the owner's domain so that the eviction report waits behind it.
        let hold = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        owner.hybridStorage.domain.queue.async {
            held.signal()
            hold.wait()
        }
        held.wait()
        for index in 0..<3 { try other.setObject(index, forKey: "x\(index)") }  // evicts "k"
        try other.setObject(2, forKey: "k")  // back before the owner hears of it
        hold.signal()

        // The stale memory copy is gone, and nobody heard of a removal.
        #expect(try owner.object(forKey: "k") == 2)
        #expect(keyEvents.events == [.edit(before: nil, after: 1)])
    }

    @Test func sweepByTheEngineNotifiesObservers() throws {
        let temp = TempDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let observer = NSObject()
        let keyEvents = Recorder<KeyChange<Int>>()
        let changes = Recorder<StorageChange<String>>()
        storage.addObserver(observer, forKey: "old") { _, _, change in keyEvents.append(change) }
        storage.addStorageObserver(observer) { _, _, change in changes.append(change) }
        try storage.setObject(1, forKey: "old", expiry: .seconds(-1))
        try storage.setObject(2, forKey: "new")

        #expect(try storage.hybridStorage.diskStorage.store.removeExpired() == 1)
        #expect(storage.objectExists(forKey: "new"))  // waits for the delivery
        #expect(keyEvents.events == [.edit(before: nil, after: 1), .remove])
        #expect(changes.events == [.add(key: "old"), .add(key: "new"), .removeExpired])
        #expect(storage.hybridStorage.memoryStorage.allKeys == ["new"])
    }

    @Test func removeExpiredObjectsReportsEachSweptKeyOnce() throws {
        let temp = TempDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let observer = NSObject()
        let keyEvents = Recorder<String>()
        let changes = Recorder<StorageChange<String>>()
        for key in ["a", "b", "c"] {
            storage.addObserver(observer, forKey: key) { _, _, change in
                if case .remove = change { keyEvents.append(key) }
            }
        }
        try storage.setObject(1, forKey: "a", expiry: .seconds(-1))
        try storage.setObject(2, forKey: "b", expiry: .seconds(-1))
        try storage.setObject(3, forKey: "c")
        storage.addStorageObserver(observer) { _, _, change in changes.append(change) }
        try storage.removeExpiredObjects()
        #expect(storage.objectExists(forKey: "c"))
        #expect(keyEvents.events.sorted() == ["a", "b"])
        #expect(changes.events == [.removeExpired])
    }

    @Test func transformedViewsShareOneDelivery() throws {
        let temp = TempDirectory()
        let storage = try makeCounted(temp)
        let doubles = storage.transformCodable(ofType: Double.self)
        let observer = NSObject()
        let keyEvents = Recorder<KeyChange<Int>>()
        storage.addObserver(observer, forKey: "k0") { _, _, change in keyEvents.append(change) }
        try storage.setObject(0, forKey: "k0")
        for index in 1..<4 { try doubles.setObject(Double(index), forKey: "k\(index)") }
        #expect(keyEvents.events == [.edit(before: nil, after: 0), .remove])
    }

    @Test func releasedStoragesStopListeningAndOthersKeepHearing() throws {
        let temp = TempDirectory()
        let owner = try makeCounted(temp)
        let store = try owner.hybridStorage.diskStorage.store
        var transient: Storage<String, Int>? = try makeCounted(temp)
        #expect(store.removalObservers.withLock { $0.observers.count } == 2)
        let observer = NSObject()
        let ownerEvents = Recorder<KeyChange<Int>>()
        let transientEvents = Recorder<KeyChange<Int>>()
        owner.addObserver(observer, forKey: "k0") { _, _, change in ownerEvents.append(change) }
        transient!.addObserver(observer, forKey: "k0") { _, _, change in transientEvents.append(change) }
        transient = nil
        #expect(store.removalObservers.withLock { $0.observers.count } == 1)
        for index in 0..<4 { try owner.setObject(index, forKey: "k\(index)") }
        #expect(ownerEvents.events == [.edit(before: nil, after: 0), .remove])
        #expect(transientEvents.events.isEmpty)
    }

    @Test func observerMayWriteFromAnEvictionEvent() throws {
        let temp = TempDirectory()
        let storage = try makeCounted(temp, countLimit: 10)
        let observer = NSObject()
        let rewritten = Recorder<Int>()
        storage.addObserver(observer, forKey: "k0") { _, storage, change in
            guard case .remove = change, rewritten.events.isEmpty else { return }
            rewritten.append(1)
            try? storage.setObject(100, forKey: "restored")  // no deadlock: the write lock is free
        }
        for index in 0..<11 { try storage.setObject(index, forKey: "k\(index)") }
        #expect(rewritten.events == [1])
        #expect(try storage.object(forKey: "restored") == 100)
    }
}
