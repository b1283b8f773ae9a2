import Foundation
import Testing

@testable import MediaStore

/// Point 13: safe from any thread. Eight threads mix every operation on
/// overlapping keys; every value read must be whole and one that was
/// written, and the store must verify clean afterwards.
@Suite struct ThreadTests {
    static let threads = 8
    static let operationsPerThread = 300
    static let chunk = 8_192
    static let keys = (0..<6).map { "https://example.com/track/\($0)" }

    /// Self-describing content: 8 bytes of version, then bytes that depend
    /// only on (key, version), so any prefix can be checked.
    static func content(key: String, version: UInt64, length: Int) -> [UInt8] {
        precondition(length >= 8)
        var generator = SeededGenerator(seed: stableHash(key) ^ version)
        return withUnsafeBytes(of: version.littleEndian) { Array($0) } + generator.bulkBytes(length - 8)
    }

    /// Whether `bytes` is a prefix of some version's content for `key`.
    static func isGenuinePrefix(_ bytes: Data, key: String) -> Bool {
        guard bytes.count >= 8 else { return true }
        let version = bytes.prefix(8).withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        return Data(content(key: key, version: version, length: bytes.count)) == bytes
    }

    static func stableHash(_ string: String) -> UInt64 {
        string.utf8.reduce(0xCBF2_9CE4_8422_2325) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    /// Errors a racing operation may legitimately meet (the entry changed
    /// or went away between calls); anything else is a failure.
    static func isExpectedRace(_ error: Error) -> Bool {
        switch error as? StoreError {
        case .notFound, .invalidRange, .rangeNotCached, .lengthMismatch, .misalignedWrite, .changedDuringRead,
            .entryReplaced:
            true
        default: false
        }
    }

    static func run(
        store: MediaStore, thread: Int, seed: UInt64, failures: Locked<[String]>
    ) {
        var random = SeededGenerator(seed: seed &+ UInt64(thread) &* 0x9E37)
        func fail(_ message: String) { failures.withLock { $0.append("thread \(thread): \(message)") } }
        for step in 0..<operationsPerThread {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<25:  // put, inline or chunked
                    let length = Int.random(in: 8...60_000, using: &random)
                    let version = random.next() & ~(1 << 63)
                    try store.put(content(key: key, version: version, length: length), forKey: key)
                case 25..<45:  // whole read
                    if let data = try store.data(forKey: key), !isGenuinePrefix(data, key: key) {
                        fail("step \(step): torn value of \(data.count) bytes for \(key)")
                    }
                case 45..<60:  // range read from the start
                    let data = try store.read(forKey: key, range: 0..<Int.random(in: 8...30_000, using: &random))
                    if !isGenuinePrefix(data, key: key) { fail("step \(step): torn range of \(key)") }
                case 60..<67:  // range read anywhere, chunk by chunk
                    let start = Int.random(in: 0..<40_000, using: &random)
                    try store.read(forKey: key, range: start..<start + Int.random(in: 1...20_000, using: &random)) {
                        _ in
                    }
                case 67..<75:
                    try store.remove(forKey: key)
                case 75..<83:  // streamed in three pieces
                    let length = Int.random(in: 8...50_000, using: &random)
                    let bytes = content(key: key, version: random.next() & ~(1 << 63), length: length)
                    let writer = try store.makeWriter(forKey: key)
                    try writer.append(bytes[..<(length / 3)])
                    try writer.append(bytes[(length / 3)..<(2 * length / 3)])
                    try writer.append(bytes[(2 * length / 3)...])
                    try writer.finish()
                case 83..<95:  // sparse: one content per (key, length), so fills from any thread agree
                    let length = [20_000, 33_000][Int.random(in: 0...1, using: &random)]
                    let bytes = content(key: key, version: 1 << 63 | UInt64(length), length: length)
                    let version = try store.prepareEntry(forKey: key, length: length).version
                    let index = Int.random(in: 0..<((length + chunk - 1) / chunk), using: &random)
                    let start = index * chunk
                    try store.write(bytes[start..<min(length, start + chunk)], at: start, forKey: key, version: version)
                case 95..<97:
                    _ = try store.cachedRanges(forKey: key)
                    _ = try store.info(forKey: key)
                    _ = try store.statistics()
                case 97..<99:
                    try store.setMetadata(EntryMetadata(etag: "\(step)"), forKey: key)
                default:
                    try store.removeExpired()
                    try store.flushAccessTimes()
                }
            } catch  where isExpectedRace(error) {
                continue
            } catch {
                fail("step \(step) (roll \(roll)) on \(key): \(error)")
            }
        }
    }

    /// Runs the mix on `threads` real threads (not a pool narrowed to the
    /// CPU count) and checks the store afterwards.
    static func hammer(_ store: MediaStore, seed: UInt64) throws {
        let failures = Locked<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            let worker = Thread {
                run(store: store, thread: thread, seed: seed, failures: failures)
                group.leave()
            }
            worker.start()
        }
        #expect(group.wait(timeout: .now() + 60) == .success, "seed \(seed): threads did not finish")
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "seed \(seed): \(found.prefix(10).joined(separator: "\n"))")

        let report = try store.verify()
        #expect(report.isClean, "seed \(seed): \(report.problems.prefix(10))")
        let entries = try store.entries()
        #expect(try store.statistics().entryCount == entries.count)
        for info in entries where info.isComplete {
            let data = try #require(try store.data(forKey: info.key))
            #expect(data.count == info.length)
            #expect(isGenuinePrefix(data, key: info.key), "seed \(seed): \(info.key)")
            #expect(ContentDigest(of: data) == info.contentDigest)
        }
    }

    @Test func eightThreadsMixingEveryOperation() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let t = try TestStore.inMemoryFileSystem(
            configuration: StoreConfiguration(chunkSize: Self.chunk, initialMapSize: 2 << 20))
        try Self.hammer(t.store, seed: seed)
        try t.reopen()
        #expect(try t.store.verify().isClean, "seed \(seed)")
    }

    /// The same mix under a size limit and a count limit, so eviction runs
    /// while other threads read and stream.
    @Test func eightThreadsUnderLimits() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let t = try TestStore.inMemoryFileSystem(
            configuration: StoreConfiguration(
                sizeLimit: 150_000, countLimit: 4, defaultLifetime: 3_600, chunkSize: Self.chunk,
                initialMapSize: 2 << 20))
        try Self.hammer(t.store, seed: seed)
        let stats = try t.store.statistics()
        #expect(stats.storedBytes <= 150_000, "seed \(seed)")
        #expect(stats.entryCount <= 4, "seed \(seed)")
    }
}
