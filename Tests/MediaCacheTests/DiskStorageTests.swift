import Foundation
import MediaStore
import Testing

@testable import MediaCache

@Suite struct DiskStorageTests {
    @Test func directoryIsCreatedAtDirectoryPlusName() throws {
        let temp = TempDirectory()
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
        let temp = TempDirectory()
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
        let temp = TempDirectory()
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

    @Test func isExpiredFlipsAfterSecondsExpiry() throws {
        let temp = TempDirectory()
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
        let temp = TempDirectory()
        let storage = try DiskStorage<Int, String>(
            config: DiskConfig(name: "d", directory: temp.url),
            transformer: TransformerFactory.forCodable(ofType: String.self))
        for index in 0..<5 { try storage.setObject("v\(index)", forKey: index) }
        #expect(Set(storage.allKeys) == Set(0..<5))
        #expect(Set(storage.allObjects) == Set((0..<5).map { "v\($0)" }))
        #expect(storage.store.allKeysForTest.contains("3"))
    }

    @Test func maxSizeIsEnforcedOnWrite() throws {
        let temp = TempDirectory()
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
        let temp = TempDirectory()
        let config = DiskConfig(name: "d", directory: temp.url)
        let first = try DiskStorage<String, Int>(
            config: config, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let second = try DiskStorage<String, Int>(
            config: config, transformer: TransformerFactory.forCodable(ofType: Int.self))
        #expect(first.store === second.store)
        try first.setObject(5, forKey: "k")
        #expect(try second.object(forKey: "k") == 5)
    }
}

extension MediaStore {
    var allKeysForTest: [String] { ((try? entries()) ?? []).map(\.key) }
}
