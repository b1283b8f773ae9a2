import Foundation
import Testing

@testable import MediaCache

@Suite struct HybridStorageTests {
    @Test func setWritesBothTiers() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: User.self))
        let hybrid = storage.hybridStorage
        let user = User(firstName: "John", lastName: "Snow")
        try hybrid.setObject(user, forKey: "u")
        #expect(try hybrid.memoryStorage.entry(forKey: "u").object == user)
        #expect(try hybrid.diskStorage.entry(forKey: "u").object == user)
    }

    /// "é" as one scalar and as "e" plus a combining accent are equal
    /// Strings (canonical equivalence) but different keys on disk, where
    /// keys are compared as bytes. The memory tier must keep them apart
    /// too, or a get of one returns the other's object.
    @Test func canonicallyEquivalentKeysAreDifferentKeysInBothTiers() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        let observer = NSObject()
        let changes = Recorder<KeyChange<Int>>()
        storage.addObserver(observer, forKey: composed) { _, _, change in changes.append(change) }
        try storage.setObject(1, forKey: composed)
        try storage.setObject(2, forKey: decomposed)
        #expect(changes.events == [.edit(before: nil, after: 1)])
        #expect(Set(storage.allKeys.map { Array($0.utf8) }) == [Array(composed.utf8), Array(decomposed.utf8)])
        #expect(try storage.object(forKey: composed) == 1)
        #expect(try storage.object(forKey: decomposed) == 2)
        #expect(try storage.hybridStorage.memoryStorage.object(forKey: composed) == 1)
        #expect(try storage.hybridStorage.diskStorage.object(forKey: composed) == 1)
        try storage.removeObject(forKey: decomposed)
        #expect(try storage.object(forKey: composed) == 1)
        #expect(isNotFound { _ = try storage.object(forKey: decomposed) })
    }

    @Test func diskHitIsPromotedWithDiskExpiry() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let hybrid = storage.hybridStorage
        let date = Date(timeIntervalSinceNow: 500)
        try hybrid.diskStorage.setObject(3, forKey: "k", expiry: .date(date))
        #expect(isNotFound { _ = try hybrid.memoryStorage.entry(forKey: "k") })
        let entry = try hybrid.entry(forKey: "k")
        #expect(entry.filePath == hybrid.diskStorage.path)
        let memory = try hybrid.memoryStorage.entry(forKey: "k")
        #expect(memory.object == 3)
        #expect(memory.filePath == nil)
        #expect(abs(memory.expiry.date.timeIntervalSince(date)) < 1)
        // object(forKey:) promotes too.
        try hybrid.removeInMemoryObject(forKey: "k")
        #expect(try hybrid.object(forKey: "k") == 3)
        #expect(try hybrid.memoryStorage.entry(forKey: "k").object == 3)
    }

    @Test func entryExpiringNowIsStillReturned() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        try storage.setObject(1, forKey: "k", expiry: .date(Date()))
        #expect(try storage.entry(forKey: "k").object == 1)
        #expect(try storage.entry(forKey: "k").expiry.isExpired)
    }

    @Test func memoryNeverOutlivesDisk() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(
            in: temp, diskExpiry: .seconds(60), memoryConfig: MemoryConfig(expiry: .never),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        try storage.setObject(1, forKey: "k")
        let memory = try storage.hybridStorage.memoryStorage.entry(forKey: "k").expiry.date
        let disk = try storage.hybridStorage.diskStorage.entry(forKey: "k").expiry.date
        #expect(abs(memory.timeIntervalSince(disk)) < 1)
    }

    @Test func shorterMemoryExpiryFallsBackToDisk() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(
            in: temp, memoryConfig: MemoryConfig(expiry: .seconds(-1)),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        try storage.setObject(1, forKey: "k")
        #expect(try storage.object(forKey: "k") == 1)  // memory copy expired, disk still valid
        if case .never = try storage.entry(forKey: "k").expiry {} else { Issue.record("expected the disk expiry") }
    }

    @Test func observerCounts() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let hybrid = storage.hybridStorage
        let observer = NSObject()
        hybrid.addStorageObserver(observer) { _, _, _ in }
        hybrid.addStorageObserver(observer) { _, _, _ in }
        #expect(hybrid.storageObservationCount == 2)
        let first = hybrid.addObserver(observer, forKey: "k") { _, _, _ in }
        hybrid.addObserver(observer, forKey: "k") { _, _, _ in }
        #expect(hybrid.keyObservationCount(forKey: "k") == 2)
        first.cancel()
        #expect(hybrid.keyObservationCount(forKey: "k") == 1)
        hybrid.removeObserver(forKey: "k")
        #expect(hybrid.keyObservationCount(forKey: "k") == 0)
        hybrid.removeAllStorageObservers()
        #expect(hybrid.storageObservationCount == 0)
    }
}
