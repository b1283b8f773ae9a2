import Foundation
import MediaStore
import Testing

@testable import MediaCache

@Suite struct DiskStorageTests {
    @Test func directoryIsCreatedAtDirectoryPlusName() throws {
        let temp = ScratchDirectory()
        let config = DiskConfig(name: "Floppy", directory: temp.url)
        #expect(config.maxSize == 0)
        let storage = try DiskStorage<String, Int>(
            config: config, transformer: TransformerFactory.forCodable(ofType: Int.self))
        #expect(storage.path == temp.url.appendingPathComponent("Floppy").path)
        #expect(FileManager.default.sizeOfDirectory(at: URL(fileURLWithPath: storage.path)) ?? 0 > 0)
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: storage.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test func defaultDirectoryIsCaches() throws {
        let name = "MediaCacheTests-\(UUID().uuidString)"
        let storage = try DiskStorage<String, Int>(
            config: DiskConfig(name: name), transformer: TransformerFactory.forCodable(ofType: Int.self))
        defer { try? FileManager.default.removeItem(atPath: storage.path) }
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first!
        #expect(storage.path == caches.appendingPathComponent(name).path)
    }

    @Test func entryCarriesExpiryAndLocation() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<String, Int>(
            config: DiskConfig(name: "d", directory: temp.url),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        let date = Date(timeIntervalSinceNow: 3600)
        try storage.setObject(7, forKey: "k", expiry: .date(date))
        let entry = try storage.entry(forKey: "k")
        #expect(entry.object == 7)
        #expect(abs(entry.expiry.date.timeIntervalSince(date)) < 0.01)
        #expect(entry.filePath == storage.path)
        try storage.setObject(8, forKey: "n")
        if case .never = try storage.entry(forKey: "n").expiry {} else { Issue.record("expected .never") }
        #expect(try storage.entry(forKey: "n").expiry.date == Expiry.never.date)
    }

    @Test func removeAllAndRemoveExpired() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<String, Int>(
            config: DiskConfig(name: "d", directory: temp.url),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        try storage.setObject(1, forKey: "past", expiry: .date(Date(timeIntervalSinceNow: -10)))
        try storage.setObject(2, forKey: "future", expiry: .seconds(60))
        #expect(try storage.entry(forKey: "past").object == 1)  // expired entries stay readable
        #expect(isNotFound { _ = try storage.object(forKey: "past") })
        try storage.removeExpiredObjects()
        #expect(isNotFound { _ = try storage.entry(forKey: "past") })
        #expect(try storage.object(forKey: "future") == 2)
        try storage.removeAll()
        #expect(storage.allKeys.isEmpty)
        #expect(try storage.store.statistics().entryCount == 0)
    }

    /// The differences table of MediaCache.docc/GettingStarted.md lists what `removeAll()` leaves.
    @Test func removeAllLeavesOnlyTheStoreFiles() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<String, Data>(
            config: DiskConfig(name: "d", directory: temp.url), transformer: TransformerFactory.forData())
        for index in 0..<50 { try storage.setObject(Data(repeating: UInt8(index), count: 20_000), forKey: "k\(index)") }
        try storage.removeAll()
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: storage.path))
        // `.maintenance-lock` (held by every open store) and `.session` (the session marker).
        #expect(left.isSubset(of: ["data.mdb", "data.mdb-lock", ".maintenance-lock", ".session"]))
        #expect(left.contains("data.mdb"))
        #expect(try storage.store.statistics().entryCount == 0)
        #expect(storage.allKeys.isEmpty)
    }

    @Test func isExpiredFlipsAfterSecondsExpiry() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<String, Int>(
            config: DiskConfig(name: "d", directory: temp.url),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        try storage.setObject(1, forKey: "k", expiry: .seconds(0.3))
        #expect(try !storage.isExpiredObject(forKey: "k"))
        Thread.sleep(forTimeInterval: 0.4)
        #expect(try storage.isExpiredObject(forKey: "k"))
        #expect(try storage.isExpiredObject(forKey: "missing"))
    }

    @Test func allKeysAndTypedKeys() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<Int, String>(
            config: DiskConfig(name: "d", directory: temp.url),
            transformer: TransformerFactory.forCodable(ofType: String.self))
        for index in 0..<5 { try storage.setObject("v\(index)", forKey: index) }
        #expect(Set(storage.allKeys) == Set(0..<5))
        #expect(Set(storage.allObjects) == Set((0..<5).map { "v\($0)" }))
        #expect(try storage.store.allKeysForTest.contains("3"))
    }

    @Test func maxSizeIsEnforcedOnWrite() throws {
        let temp = ScratchDirectory()
        let storage = try DiskStorage<String, Data>(
            config: DiskConfig(name: "d", maxSize: 200_000, directory: temp.url, compressionLevel: 0),
            transformer: TransformerFactory.forData())
        for index in 0..<10 {
            try storage.setObject(Data(repeating: UInt8(index), count: 60_000), forKey: "n\(index)")
        }
        #expect((storage.totalSize ?? .max) <= 200_000)
        #expect(storage.objectExists(forKey: "n9"))
        #expect(!storage.objectExists(forKey: "n0"))
        #expect(throws: StorageError.self) { try storage.setObject(Data(count: 300_000), forKey: "huge") }
    }

    @Test func sameDirectoryOpensOneStore() throws {
        let temp = ScratchDirectory()
        let config = DiskConfig(name: "d", directory: temp.url)
        let first = try DiskStorage<String, Int>(
            config: config, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let second = try DiskStorage<String, Int>(
            config: config, transformer: TransformerFactory.forCodable(ofType: Int.self))
        #expect(try first.store === second.store)
        try first.setObject(5, forKey: "k")
        #expect(try second.object(forKey: "k") == 5)
    }
}

extension MediaStore {
    var allKeysForTest: [String] { ((try? entries()) ?? []).map(\.key) }
}

/// `DiskStorage(config:fileManager:path:transformer:)` does not throw (as
/// upstream); a store that cannot open fails on first use.
@Suite struct DiskStorageOpenFailureTests {
    /// A path where no store can open: a plain file.
    func unusablePath(in temp: ScratchDirectory) throws -> String {
        try FileManager.default.createDirectory(at: temp.url, withIntermediateDirectories: true)
        let file = temp.url.appendingPathComponent("not-a-folder")
        try Data("hello".utf8).write(to: file)
        return file.path
    }

    @Test func thePathInitialiserDoesNotThrowAndDefaultsTheFileManager() throws {
        let temp = ScratchDirectory()
        let path = temp.url.appendingPathComponent("d").path
        let storage = DiskStorage<String, Int>(
            config: DiskConfig(name: "d"), path: path, transformer: TransformerFactory.forCodable(ofType: Int.self))
        #expect(storage.fileManager === FileManager.default)
        #expect(storage.path == path)
        try storage.setObject(3, forKey: "k")
        #expect(try storage.object(forKey: "k") == 3)
    }

    @Test func aStoreThatCannotOpenFailsOnFirstUse() throws {
        let temp = ScratchDirectory()
        let storage = DiskStorage<String, Int>(
            config: DiskConfig(name: "d"), path: try unusablePath(in: temp),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        func isStoreError(_ body: () throws -> Void) -> Bool {
            do {
                try body()
                return false
            } catch let error as StorageError {
                guard case .store = error else { return false }
                return true
            } catch {
                return false
            }
        }
        #expect(isStoreError { try storage.setObject(1, forKey: "k") })
        #expect(isStoreError { _ = try storage.object(forKey: "k") })
        #expect(isStoreError { _ = try storage.entry(forKey: "k") })
        #expect(isStoreError { try storage.removeObject(forKey: "k") })
        #expect(isStoreError { try storage.removeAll() })
        #expect(isStoreError { try storage.removeExpiredObjects() })
        #expect(isStoreError { _ = try storage.store })
        #expect(!storage.objectExists(forKey: "k"))
        #expect(storage.allKeys.isEmpty && storage.allObjects.isEmpty)
        #expect(storage.totalSize == nil)
        #expect(try storage.isExpiredObject(forKey: "k"))

        // A storage over it reports the same error instead of crashing.
        let hybrid = HybridStorage(
            memoryStorage: MemoryStorage<String, Int>(config: MemoryConfig()), diskStorage: storage)
        let facade = Storage(hybridStorage: hybrid)
        #expect(isStoreError { try facade.setObject(1, forKey: "k") })
        #expect(!facade.objectExists(forKey: "k"))
    }

    @Test func theThrowingInitialiserReportsTheSameErrorAtOnce() throws {
        let temp = ScratchDirectory()
        let file = try unusablePath(in: temp)
        let url = URL(fileURLWithPath: file)
        #expect(throws: StorageError.self) {
            _ = try DiskStorage<String, Int>(
                config: DiskConfig(name: url.lastPathComponent, directory: url.deletingLastPathComponent()),
                transformer: TransformerFactory.forCodable(ofType: Int.self))
        }
        #expect(throws: StorageError.self) {
            _ = try Storage<String, Int>(
                diskConfig: DiskConfig(name: url.lastPathComponent, directory: url.deletingLastPathComponent()),
                memoryConfig: MemoryConfig(), transformer: TransformerFactory.forCodable(ofType: Int.self))
        }
    }
}
