import Foundation
import Testing

@testable import MediaCache

@Suite struct ObservationTests {
    @Test func storageEventSequence() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: User.self))
        let recorder = Recorder<StorageChange<String>>()
        var observer: NSObject? = NSObject()
        storage.addStorageObserver(observer!) { _, observed, change in
            #expect(observed === storage)
            recorder.append(change)
        }
        try storage.setObject(User(firstName: "a", lastName: "b"), forKey: "u1")
        try storage.setObject(User(firstName: "c", lastName: "d"), forKey: "u2")
        try storage.removeObject(forKey: "u1")
        try storage.removeObject(forKey: "u1")  // missing: no event
        try storage.removeExpiredObjects()
        try storage.removeAll()
        try storage.removeInMemoryObject(forKey: "u2")
        #expect(
            recorder.events == [
                .add(key: "u1"), .add(key: "u2"), .remove(key: "u1"), .removeExpired, .removeAll,
                .removeInMemory(key: "u2"),
            ])
        observer = nil
        try storage.setObject(User(firstName: "e", lastName: "f"), forKey: "u3")
        #expect(recorder.events.count == 6)
    }

    @Test func keyEventsForRemoveExpiredAndRemoveAll() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: User.self))
        let user = User(firstName: "a", lastName: "b")
        let observer = NSObject()
        let expired = Recorder<KeyChange<User>>()
        storage.addObserver(observer, forKey: "e") { _, _, change in expired.append(change) }
        try storage.setObject(user, forKey: "e", expiry: .seconds(-1))
        try storage.removeExpiredObjects()
        #expect(expired.events == [.edit(before: nil, after: user), .remove])

        let all = Recorder<KeyChange<User>>()
        storage.addObserver(observer, forKey: "a") { _, _, change in all.append(change) }
        try storage.setObject(user, forKey: "a")
        try storage.removeAll()
        #expect(all.events == [.edit(before: nil, after: user), .remove])
    }

    @Test func editCarriesBeforeAndKeyEventComesFirst() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let order = Recorder<String>()
        let observer = NSObject()
        try storage.setObject(1, forKey: "k")
        try storage.removeInMemoryObject(forKey: "k")  // "before" comes from disk
        storage.addStorageObserver(observer) { _, _, change in order.append("storage \(change)") }
        storage.addObserver(observer, forKey: "k") { _, _, change in order.append("key \(change)") }
        try storage.setObject(2, forKey: "k")
        try storage.removeObject(forKey: "k")
        #expect(
            order.events == [
                "key \(KeyChange<Int>.edit(before: 1, after: 2))", "storage \(StorageChange<String>.add(key: "k"))",
                "key \(KeyChange<Int>.remove)", "storage \(StorageChange<String>.remove(key: "k"))",
            ])
    }

    @Test func tokenCancelAndWeakObservers() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let recorder = Recorder<Int>()
        let observer = NSObject()
        let token = storage.addObserver(observer, forKey: "k") { _, _, _ in recorder.append(1) }
        let storageToken = storage.addStorageObserver(observer) { _, _, _ in recorder.append(2) }
        try storage.setObject(1, forKey: "k")
        token.cancel()
        storageToken.cancel()
        token.cancel()
        try storage.setObject(2, forKey: "k")
        #expect(recorder.events == [1, 2])
        var transient: NSObject? = NSObject()
        storage.addObserver(transient!, forKey: "k") { _, _, _ in recorder.append(3) }
        transient = nil
        try storage.setObject(3, forKey: "k")
        #expect(recorder.events == [1, 2])
        #expect(storage.hybridStorage.keyObservationCount(forKey: "k") == 0)
        storage.addObserver(observer, forKey: "k") { _, _, _ in recorder.append(4) }
        storage.addObserver(observer, forKey: "j") { _, _, _ in recorder.append(5) }
        storage.removeAllKeyObservers()
        try storage.setObject(4, forKey: "k")
        #expect(recorder.events == [1, 2])
    }

    @Test func transformedWritesReachObservers() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let doubles = storage.transformCodable(ofType: Double.self)
        let changes = Recorder<StorageChange<String>>()
        let keys = Recorder<KeyChange<Int>>()
        let observer = NSObject()
        storage.addStorageObserver(observer) { _, _, change in changes.append(change) }
        storage.addObserver(observer, forKey: "k") { _, _, change in keys.append(change) }
        try doubles.setObject(4, forKey: "k")
        try doubles.removeObject(forKey: "k")
        #expect(changes.events == [.add(key: "k"), .remove(key: "k")])
        #expect(keys.events == [.edit(before: nil, after: 4), .remove])
    }

    @Test func observerMayCallTheStorage() throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let seen = Recorder<Int>()
        let observer = NSObject()
        storage.addStorageObserver(observer) { _, storage, change in
            if case .add(let key) = change, let value = try? storage.object(forKey: key) { seen.append(value) }
        }
        try storage.setObject(9, forKey: "k")
        #expect(seen.events == [9])
    }
}
