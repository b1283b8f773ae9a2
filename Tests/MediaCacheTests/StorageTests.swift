import Foundation
import Testing

@testable import MediaCache

@Suite struct StorageTests {
    @Test func syncRoundTripAndMissingKeys() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: User.self))
        let user = User(firstName: "John", lastName: "Snow")
        try storage.setObject(user, forKey: "user")
        #expect(try storage.object(forKey: "user") == user)
        #expect(storage.objectExists(forKey: "user"))
        #expect(try storage.isExpiredObject(forKey: "user") == false)
        #expect(storage.totalDiskStorageSize ?? 0 > 0)
        // A missing key is StorageError.notFound from every layer.
        #expect(isNotFound { _ = try storage.object(forKey: "nope") })
        #expect(isNotFound { _ = try storage.entry(forKey: "nope") })
        #expect(isNotFound { _ = try storage.hybridStorage.entry(forKey: "nope") })
        #expect(isNotFound { _ = try storage.hybridStorage.diskStorage.entry(forKey: "nope") })
        #expect(isNotFound { _ = try storage.hybridStorage.memoryStorage.entry(forKey: "nope") })
        #expect(!storage.objectExists(forKey: "nope"))
        #expect(try storage.isExpiredObject(forKey: "nope"))
        // Removing a missing key is not an error.
        try storage.removeObject(forKey: "nope")
        try storage.removeObject(forKey: "user")
        #expect(isNotFound { _ = try storage.object(forKey: "user") })
    }

    @Test func expiredIsMissButEntryStillReturned() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: String.self))
        try storage.setObject("stale", forKey: "k", expiry: .seconds(-10))
        #expect(isNotFound { _ = try storage.object(forKey: "k") })
        #expect(!storage.objectExists(forKey: "k"))
        #expect(try storage.isExpiredObject(forKey: "k"))
        let entry = try storage.entry(forKey: "k")
        #expect(entry.object == "stale")
        #expect(entry.expiry.isExpired)
        // Also after the memory copy is gone (the disk tier keeps it until swept).
        try storage.removeInMemoryObject(forKey: "k")
        #expect(try storage.entry(forKey: "k").object == "stale")
        try storage.removeExpiredObjects()
        #expect(isNotFound { _ = try storage.entry(forKey: "k") })
    }

    @Test func allKeysCoverTheDiskTier() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(
            in: temp, memoryConfig: MemoryConfig(countLimit: 2),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        for index in 0..<6 { try storage.setObject(index, forKey: "k\(index)") }
        try storage.setObject(99, forKey: "expired", expiry: .seconds(-1))
        #expect(Set(storage.allKeys) == Set((0..<6).map { "k\($0)" }))
        #expect(Set(storage.allObjects) == Set(0..<6))
        #expect(storage.hybridStorage.memoryStorage.count == 2)  // reading them all did not thrash memory
    }

    @Test func codableRoundTripsAcrossTransforms() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forData())
        let ints = storage.transformCodable(ofType: Int.self)
        let floats = storage.transformCodable(ofType: Float.self)
        let doubles = storage.transformCodable(ofType: Double.self)
        let strings = storage.transformCodable(ofType: String.self)
        try ints.setObject(10, forKey: "n")
        #expect(try floats.object(forKey: "n") == 10)
        try floats.setObject(3.5, forKey: "f")
        #expect(try doubles.object(forKey: "f") == 3.5)
        try doubles.setObject(2.25, forKey: "d")
        #expect(try floats.object(forKey: "d") == 2.25)
        try strings.setObject("hello", forKey: "s")
        #expect(throws: DecodingError.self) { try ints.object(forKey: "s") }
        // The last write wins across views.
        try ints.setObject(1, forKey: "x")
        try strings.setObject("one", forKey: "x")
        #expect(throws: DecodingError.self) { try ints.object(forKey: "x") }
        #expect(try strings.object(forKey: "x") == "one")
        // Raw envelope through the Data view.
        #expect(try storage.object(forKey: "s") == Data(#"{"object":"hello"}"#.utf8))
        // Codable migration between types.
        struct V1: Codable { var name: String }
        struct V2: Codable {
            var name: String
            var age: Int?
        }
        try storage.transformCodable(ofType: V1.self).setObject(V1(name: "a"), forKey: "m")
        let migrated = try storage.transformCodable(ofType: V2.self).object(forKey: "m")
        #expect(migrated.name == "a" && migrated.age == nil)
    }

    @Test func transformSharesMemoryTier() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let data = storage.transformData()
        #expect(storage.hybridStorage.memoryStorage.cache === data.hybridStorage.memoryStorage.cache)
        try storage.setObject(5, forKey: "k")
        #expect(data.hybridStorage.memoryStorage.count == 1)
        try data.removeInMemoryObject(forKey: "k")
        #expect(storage.hybridStorage.memoryStorage.count == 0)
    }
}
