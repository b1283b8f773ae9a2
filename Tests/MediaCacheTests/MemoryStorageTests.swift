import Foundation
import Testing

@testable import MediaCache

@Suite struct MemoryStorageTests {
    @Test func defaultExpiryIsConfigExpiry() throws {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig(expiry: .date(Date(timeIntervalSinceNow: 60))))
        storage.setObject(1, forKey: "a")
        #expect(abs(try storage.entry(forKey: "a").expiry.date.timeIntervalSince(storage.config.expiry.date)) < 0.001)
        let never = MemoryStorage<String, Int>(config: MemoryConfig())
        never.setObject(1, forKey: "a")
        #expect(try never.entry(forKey: "a").expiry.date == Expiry.never.date)
    }

    @Test func secondsExpiryIsFrozenAtWrite() throws {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig())
        storage.setObject(1, forKey: "a", expiry: .seconds(1))
        let first = try storage.entry(forKey: "a").expiry.date
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try storage.entry(forKey: "a").expiry.date == first)
        #expect(abs(first.timeIntervalSinceNow - 0.8) < 0.1)
    }

    @Test func missingKeyAndWrongType() {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig())
        #expect(isNotFound { _ = try storage.entry(forKey: "x") })
        let strings: MemoryStorage<String, String> = storage.transform()
        strings.setObject("s", forKey: "k")
        #expect(throws: StorageError.typeNotMatch) { try storage.entry(forKey: "k") }
    }

    @Test func expiredRemovalAndExpiredIsMiss() throws {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig())
        storage.setObject(1, forKey: "old", expiry: .seconds(-1))
        storage.setObject(2, forKey: "new")
        #expect(try storage.entry(forKey: "old").object == 1)
        #expect(isNotFound { _ = try storage.object(forKey: "old") })
        #expect(!storage.objectExists(forKey: "old"))
        #expect(try storage.isExpiredObject(forKey: "old"))
        #expect(try storage.isExpiredObject(forKey: "missing"))
        storage.removeObjectIfExpired(forKey: "new")
        storage.removeObjectIfExpired(forKey: "old")
        #expect(storage.count == 1)
        storage.setObject(3, forKey: "old2", expiry: .date(Date(timeIntervalSinceNow: -1)))
        storage.removeExpiredObjects()
        #expect(storage.allKeys == ["new"])
    }

    /// `object(forKey:)` (MemoryStorage's own, not made through `entry`)
    /// answers as `entry(forKey:)` does, called directly and through the
    /// protocol: the value, `notFound` when missing or expired,
    /// `typeNotMatch` for another type's object (expired or not), and a
    /// hit becomes the most recently used.
    @Test func objectAnswersAsEntry() throws {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig(countLimit: 3))
        let strings: MemoryStorage<String, String> = storage.transform()
        storage.setObject(1, forKey: "live")
        storage.setObject(2, forKey: "old", expiry: .seconds(-1))
        strings.setObject("s", forKey: "string")
        func viaProtocol<S: StorageAware>(_ storage: S, _ key: S.Key) throws -> S.Value {
            try storage.object(forKey: key)
        }
        for read in [{ try storage.object(forKey: $0) }, { try viaProtocol(storage, $0) }] as [(String) throws -> Int] {
            #expect(try read("live") == 1)
            #expect(isNotFound { _ = try read("old") })
            #expect(isNotFound { _ = try read("missing") })
            #expect(throws: StorageError.typeNotMatch) { try read("string") }
        }
        strings.setObject("expired", forKey: "string", expiry: .seconds(-1))
        #expect(throws: StorageError.typeNotMatch) { try storage.object(forKey: "string") }
        #expect(throws: StorageError.typeNotMatch) { try storage.entry(forKey: "string") }

        // "live" was read last of the three: a fourth key evicts "old".
        #expect(try storage.object(forKey: "live") == 1)
        storage.setObject(3, forKey: "new")
        #expect(Set(storage.cache.keys) == ["live", "string", "new"])
        storage.removeObject(forKey: "live")
        #expect(isNotFound { _ = try storage.object(forKey: "live") })
    }

    @Test func countLimitEvictsLeastRecentlyUsed() throws {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig(countLimit: 2))
        for index in 0..<5 { storage.setObject(index, forKey: "k\(index)") }
        #expect(Set(storage.allKeys) == ["k3", "k4"])
        #expect(storage.count == 2)
        _ = try storage.entry(forKey: "k3")  // k3 becomes the most recent
        storage.setObject(5, forKey: "k5")
        #expect(Set(storage.allKeys) == ["k3", "k5"])
        #expect(storage.allObjects.count == storage.allKeys.count)
    }

    @Test func totalCostLimitIsExact() throws {
        let storage = MemoryStorage<String, Data>(
            config: MemoryConfig(totalCostLimit: 100), transformer: TransformerFactory.forData())
        storage.setObject(Data(count: 40), forKey: "a")
        storage.setObject(Data(count: 40), forKey: "b")
        #expect(storage.totalCost == 80)
        _ = try storage.entry(forKey: "a")
        storage.setObject(Data(count: 40), forKey: "c")  // evicts b, the least recently used
        #expect(Set(storage.allKeys) == ["a", "c"])
        #expect(storage.totalCost == 80)
        storage.setObject(Data(count: 101), forKey: "huge")  // larger than the limit: not kept
        #expect(isNotFound { _ = try storage.entry(forKey: "huge") })
        storage.setObject(Data(count: 10), forKey: "a", expiry: nil, cost: 100)
        #expect(storage.allKeys == ["a"])
        #expect(storage.totalCost == 100)
    }

    @Test func costWithoutTransformerIsOne() {
        let storage = MemoryStorage<String, Int>(config: MemoryConfig(totalCostLimit: 3))
        for index in 0..<10 { storage.setObject(index, forKey: "\(index)") }
        #expect(storage.totalCost == 3)
        #expect(Set(storage.allObjects) == [7, 8, 9])
    }

    @Test func lruStressMatchesModel() {
        // A random operation sequence checked against a simple model.
        var generator = SystemRandomNumberGenerator()
        let cache = LRUCache<Int>(countLimit: 8, totalCostLimit: 50)
        var model: [(key: Int, cost: Int)] = []  // most recent last
        for _ in 0..<5000 {
            let key = Int.random(in: 0..<20, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                let cost = Int.random(in: 0..<15, using: &generator)
                cache.set(.init(object: key, expiry: nil, cost: cost), forKey: key)
                model.removeAll { $0.key == key }
                model.append((key, cost))
                while model.count > 8 || model.reduce(0, { $0 + $1.cost }) > 50 { model.removeFirst() }
            case 1:
                let hit = cache.capsule(forKey: key) != nil
                #expect(hit == model.contains { $0.key == key })
                if let index = model.firstIndex(where: { $0.key == key }) { model.append(model.remove(at: index)) }
            default:
                cache.remove(forKey: key)
                model.removeAll { $0.key == key }
            }
            #expect(cache.keys == model.reversed().map(\.key))
            #expect(cache.totalCost == model.reduce(0, { $0 + $1.cost }))
        }
    }
}
