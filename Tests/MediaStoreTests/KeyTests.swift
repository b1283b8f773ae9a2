import Foundation
import Testing

@testable import MediaStore

/// Point 1: keys are any string; long keys work and colliding key digests never alias.
@Suite struct KeyTests {
    @Test func aTenKilobyteKeyWorks() throws {
        let t = try TestStore()
        let key = "https://cdn.example.com/track.mp3?token=" + String(repeating: "x", count: 10_240)
        let other = String(key.dropLast()) + "y"
        var generator = SeededGenerator(seed: 10)
        let small = generator.bytes(100)
        let large = generator.bytes(300_000)
        try t.store.put(small, forKey: key)
        try t.store.put(large, forKey: other)
        #expect(try t.store.data(forKey: key) == Data(small))
        #expect(try t.store.data(forKey: other) == Data(large))
        #expect(try t.store.info(forKey: key)?.key == key)

        try t.reopen()
        #expect(try t.store.data(forKey: key) == Data(small))
        #expect(try t.store.data(forKey: other) == Data(large))
        #expect(try t.store.remove(forKey: key))
        #expect(try t.store.data(forKey: key) == nil)
        #expect(try t.store.data(forKey: other) == Data(large))
        #expect(try t.store.verify().isClean)
    }

    @Test func unicodeAndEmptyKeysAreDistinct() throws {
        let t = try TestStore()
        let keys = ["", " ", "é", "e\u{301}", "🎵/track?q=1", "a\u{0}b"]
        for (index, key) in keys.enumerated() {
            try t.store.put([UInt8(index)], forKey: key)
        }
        try t.reopen()
        for (index, key) in keys.enumerated() {
            #expect(try t.store.data(forKey: key) == Data([UInt8(index)]), "key \(key.debugDescription)")
        }
        #expect(try t.store.statistics().entryCount == keys.count)
    }

    @Test func collidingKeyDigestsNeverAlias() throws {
        let t = try CollidingStore()
        var generator = SeededGenerator(seed: 11)
        let keys = (0..<5).map { "https://example.com/\($0)" }
        // Inline, chunked and sparse entries share one digest.
        let values = keys.indices.map { generator.bytes($0.isMultiple(of: 2) ? 50 + $0 : 9_000 + $0) }
        for (key, value) in zip(keys, values) {
            try t.store.put(value, forKey: key)
        }
        try t.store.prepareEntry(forKey: "sparse", length: 20_000)
        #expect(try t.store.data(forKey: "absent") == nil)
        #expect(try t.store.info(forKey: "absent") == nil)
        for (key, value) in zip(keys, values) {
            #expect(try t.store.data(forKey: key) == Data(value))
            #expect(try t.store.info(forKey: key)?.key == key)
        }
        #expect(try t.store.statistics().entryCount == keys.count + 1)
        #expect(try t.store.info(forKey: "sparse")?.isComplete == false)

        // Replacing one keeps its neighbours.
        let replacement = generator.bytes(12_000)
        try t.store.put(replacement, forKey: keys[1])
        #expect(try t.store.data(forKey: keys[1]) == Data(replacement))
        #expect(try t.store.data(forKey: keys[2]) == Data(values[2]))

        // Removing one leaves the others.
        #expect(try t.store.remove(forKey: keys[2]))
        #expect(try !t.store.remove(forKey: keys[2]))
        #expect(try t.store.data(forKey: keys[2]) == nil)
        #expect(try t.store.data(forKey: keys[3]) == Data(values[3]))

        // A key added after a removal gets a slot of its own.
        try t.store.put([42], forKey: "late")
        try t.reopen()
        #expect(try t.store.data(forKey: keys[0]) == Data(values[0]))
        #expect(try t.store.data(forKey: keys[1]) == Data(replacement))
        #expect(try t.store.data(forKey: keys[2]) == nil)
        #expect(try t.store.data(forKey: keys[3]) == Data(values[3]))
        #expect(try t.store.data(forKey: keys[4]) == Data(values[4]))
        #expect(try t.store.data(forKey: "late") == Data([42]))
        #expect(try t.store.statistics().entryCount == keys.count + 1)
        let report = try t.store.verify()
        #expect(report.isClean, "\(report.problems)")
    }

    @Test func collidingKeysWorkForStreamedAndSparseEntries() throws {
        let t = try CollidingStore()
        var generator = SeededGenerator(seed: 12)
        let a = generator.bytes(30_000)
        let b = generator.bytes(30_000)
        let writer = try t.store.makeWriter(forKey: "a")
        try writer.append(a)
        try writer.finish()
        let chunk = t.store.configuration.chunkSize
        let version = try t.store.prepareEntry(forKey: "b", length: b.count).version
        try t.store.write(b[chunk...], at: chunk, forKey: "b", version: version)
        try t.store.write(b[..<chunk], at: 0, forKey: "b", version: version)
        #expect(try t.store.data(forKey: "a") == Data(a))
        #expect(try t.store.data(forKey: "b") == Data(b))
        #expect(try t.store.cachedRanges(forKey: "a") == [0..<a.count])
        #expect(try t.store.read(forKey: "b", range: 100..<200) == Data(b[100..<200]))
        #expect(try t.store.verify().isClean)
    }

    /// Swift's `==` on strings is canonical equivalence, but keys are
    /// bytes: "é" (U+00E9) and "e" + U+0301 are different keys even when
    /// their digests collide.
    @Test func canonicallyEquivalentKeysStayDistinctUnderCollision() throws {
        let t = try CollidingStore()
        try t.store.put([1], forKey: "caf\u{E9}")
        try t.store.put([2], forKey: "cafe\u{301}")
        #expect(try t.store.statistics().entryCount == 2)
        #expect(try t.store.data(forKey: "caf\u{E9}") == Data([1]))
        #expect(try t.store.data(forKey: "cafe\u{301}") == Data([2]))
        #expect(try t.store.remove(forKey: "cafe\u{301}"))
        #expect(try t.store.data(forKey: "caf\u{E9}") == Data([1]))
        #expect(try t.store.verify().isClean)
    }
}

/// A store whose key hash maps every key to the same digest, so that every
/// key collides with every other.
final class CollidingStore {
    static let configuration = StoreConfiguration(chunkSize: 8_192, initialMapSize: 64 << 20)
    static let hash: @Sendable (String) -> ContentDigest = { _ in ContentDigest(high: 0xC011_1DE, low: 42) }

    let directory = temporaryPath("colliding")
    private(set) var store: MediaStore!

    init() throws {
        store = try Self.open(directory)
    }

    static func open(_ directory: URL) throws -> MediaStore {
        try MediaStore(directory: directory, configuration: configuration, readOnly: false, keyHash: hash)
    }

    /// Closes and reopens with the same colliding hash.
    func reopen() throws {
        store = nil
        store = try Self.open(directory)
    }

    deinit {
        store = nil
        try? FileManager.default.removeItem(at: directory)
    }
}
