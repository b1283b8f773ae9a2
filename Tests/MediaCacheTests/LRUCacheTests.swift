import Foundation
import TestSupport
import Testing

@testable import MediaCache

/// The memory tier's cache on keys whose hashes collide (chosen by the
/// test): lookups, replacements, evictions and removals must still tell
/// the keys apart, and the index must stay consistent with the slots.
@Suite struct LRUCacheTests {
    typealias Cache = LRUCache<Int>

    /// Keys 0, 3, 6, … share one hash, 1, 4, 7, … another (differing from
    /// the first above the low 32 bits only), and 2, 5, 8, … a third.
    static func key(_ value: Int) -> Cache.HashedKey {
        Cache.HashedKey(value, hash: [5, 5 + 1 << 40, 6][value % 3])
    }

    static func capsule(_ value: Int, cost: Int = 1) -> Cache.Capsule {
        Cache.Capsule(object: value, expiry: nil, cost: cost)
    }

    static func object(_ cache: Cache, _ value: Int) -> Int? {
        cache.capsule(forKey: key(value), touch: false)?.object as? Int
    }

    @Test func collidingKeysStayApart() {
        let cache = Cache(countLimit: 6, totalCostLimit: 0)
        for value in 0..<10 { cache.set(Self.capsule(value * 10), forKey: Self.key(value)) }
        #expect(cache.inconsistency == nil)
        #expect(cache.count == 6)
        #expect(cache.keys == [9, 8, 7, 6, 5, 4])
        for value in 0..<4 { #expect(Self.object(cache, value) == nil) }
        for value in 4..<10 { #expect(Self.object(cache, value) == value * 10) }

        // A replacement keeps its slot and moves to the front.
        cache.set(Self.capsule(-6), forKey: Self.key(6))
        #expect(cache.keys == [6, 9, 8, 7, 5, 4])
        #expect(Self.object(cache, 6) == -6)
        #expect(cache.remove(forKey: Self.key(7))?.object as? Int == 70)
        #expect(cache.remove(forKey: Self.key(7)) == nil)
        #expect(!cache.contains(Self.key(7)))
        #expect(cache.contains(Self.key(4)))
        #expect(cache.keys == [6, 9, 8, 5, 4])
        #expect(cache.inconsistency == nil)
    }

    @Test func removeExpiredTakesOutOnlyTheExpired() {
        let cache = Cache(countLimit: 0, totalCostLimit: 0)
        let now = Date()
        for value in 0..<9 {
            let expiry = value.isMultiple(of: 2) ? now.addingTimeInterval(-1) : now.addingTimeInterval(60)
            cache.set(.init(object: value, expiry: expiry, cost: 1), forKey: Self.key(value))
        }
        #expect(Set(cache.removeExpired(at: now)) == [0, 2, 4, 6, 8])
        #expect(cache.keys == [7, 5, 3, 1])
        #expect(cache.totalCost == 4)
        #expect(cache.inconsistency == nil)
    }

    @Test func randomOperationsOnCollidingKeysMatchAModel() {
        var generator = SplitMix64(seed: 0x1EC0)
        let cache = Cache(countLimit: 12, totalCostLimit: 60)
        var model: [(key: Int, cost: Int)] = []  // most recent last
        for step in 0..<10_000 {
            let key = Int(generator.next() % 30)
            switch generator.next() % 4 {
            case 0, 1:
                let cost = Int(generator.next() % 15)
                cache.set(Self.capsule(key, cost: cost), forKey: Self.key(key))
                model.removeAll { $0.key == key }
                model.append((key, cost))
                while model.count > 12 || model.reduce(0, { $0 + $1.cost }) > 60 { model.removeFirst() }
            case 2:
                let hit = cache.capsule(forKey: Self.key(key))?.object as? Int
                #expect(hit == (model.contains { $0.key == key } ? key : nil))
                if let index = model.firstIndex(where: { $0.key == key }) { model.append(model.remove(at: index)) }
            default:
                cache.remove(forKey: Self.key(key))
                model.removeAll { $0.key == key }
            }
            if let problem = cache.inconsistency {
                Issue.record("step \(step): \(problem)")
                return
            }
            guard cache.keys == model.reversed().map(\.key) else {
                Issue.record("step \(step): keys \(cache.keys), expected \(model.reversed().map(\.key))")
                return
            }
            #expect(cache.totalCost == model.reduce(0, { $0 + $1.cost }))
        }
    }

    @Test func stringKeysAreHashedAndComparedByTheirBytes() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let cache = LRUCache<String>(countLimit: 0, totalCostLimit: 0)
        cache.set(.init(object: 1, expiry: nil, cost: 1), forKey: composed)
        cache.set(.init(object: 2, expiry: nil, cost: 1), forKey: decomposed)
        #expect(cache.count == 2)
        #expect(cache.capsule(forKey: composed)?.object as? Int == 1)
        #expect(cache.capsule(forKey: decomposed)?.object as? Int == 2)
        // A Substring key hashes as the equal String.
        #expect(
            LRUCache<Substring>.HashedKey(Substring("x" + composed).dropFirst()).hash
                == LRUCache<String>.HashedKey(composed).hash)
        #expect(cache.inconsistency == nil)
    }
}
