import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// Point 13: safe from any thread. Eight threads mix every operation on
/// overlapping keys; every value read must be whole and one that was
/// written, and the store must verify clean afterwards.
// Six minutes: under TSan on 2 cores these run 3–4 minutes (5 s without).
@Suite(.timeLimit(.minutes(6))) struct ThreadTests {
    static let threads = 8
    static let operationsPerThread = 300
    static let chunk = 8_192
    static let keys = (0..<6).map { "https://example.com/track/\($0)" }

    /// Self-describing content (``SelfDescribingBytes``): every byte names
    /// its key, content and offset, so any read of 31 bytes or more is
    /// checked exactly, wherever it starts.
    static func content(key: String, variant: UInt8, length: Int) -> [UInt8] {
        SelfDescribingBytes.content(
            key: keyID(key), id: SelfDescribingBytes.contentID(variant: variant, length: length))
    }

    /// The content id a sparse fill of `key` prepares (and announces as its ETag).
    static func sparseContent(variant: UInt8, length: Int) -> (id: UInt32, options: WriteOptions) {
        let id = SelfDescribingBytes.contentID(variant: 0x80 | variant, length: length)
        return (id, WriteOptions(metadata: EntryMetadata(etag: "\"\(id)\"")))
    }

    static func keyID(_ key: String) -> UInt16 { UInt16(truncatingIfNeeded: stableHash(key)) }

    /// Whether `bytes`, read at `offset` of `key`, are all one content of
    /// that key, right at every offset (and, for `whole`, all of it).
    static func isGenuine(_ bytes: some Collection<UInt8>, at offset: Int = 0, key: String, whole: Bool = false)
        -> Bool
    {
        guard case .content(let id) = SelfDescribingBytes.decode(bytes, at: offset, key: keyID(key)) else {
            return false
        }
        return !whole || bytes.count == SelfDescribingBytes.length(of: id)
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
        var random = SplitMix64(seed: seed &+ UInt64(thread) &* 0x9E37)
        func fail(_ message: String) { failures.withLock { $0.append("thread \(thread): \(message)") } }
        for step in 0..<operationsPerThread {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<25:  // put, inline or chunked
                    let length = Int.random(in: 32...60_000, using: &random)
                    try store.put(
                        content(key: key, variant: .random(in: 0...0x7F, using: &random), length: length), forKey: key)
                case 25..<45:  // whole read
                    if let data = try store.data(forKey: key), !isGenuine(data, key: key, whole: true) {
                        fail("step \(step): torn value of \(data.count) bytes for \(key)")
                    }
                case 45..<60:  // range read from the start
                    let data = try store.read(forKey: key, range: 0..<Int.random(in: 32...30_000, using: &random))
                    if !isGenuine(data, key: key) { fail("step \(step): torn range of \(key)") }
                case 60..<67:  // range read anywhere, chunk by chunk
                    let start = Int.random(in: 0..<40_000, using: &random)
                    var streamed: [UInt8] = []
                    try store.read(forKey: key, range: start..<start + Int.random(in: 32...20_000, using: &random)) {
                        streamed += $0
                    }
                    if !isGenuine(streamed, at: start, key: key) {
                        fail("step \(step): torn chunk-by-chunk read of \(key) at \(start)")
                    }
                case 67..<75:
                    try store.remove(forKey: key)
                case 75..<83:  // streamed in three pieces
                    let length = Int.random(in: 32...50_000, using: &random)
                    let bytes = content(key: key, variant: .random(in: 0...0x7F, using: &random), length: length)
                    let writer = try store.makeWriter(forKey: key)
                    try writer.append(bytes[..<(length / 3)])
                    try writer.append(bytes[(length / 3)..<(2 * length / 3)])
                    try writer.append(bytes[(2 * length / 3)...])
                    try writer.finish()
                case 83..<95:  // sparse: two contents per length, told apart by ETag
                    let length = [20_000, 33_000][Int.random(in: 0...1, using: &random)]
                    let (id, options) = sparseContent(variant: .random(in: 0...1, using: &random), length: length)
                    let bytes = SelfDescribingBytes.content(key: keyID(key), id: id)
                    let version = try store.prepareEntry(forKey: key, length: length, options: options).version
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
        // 300 s: a few seconds normally, minutes under Thread Sanitizer on 2 cores.
        #expect(group.wait(timeout: .now() + 300) == .success, "seed \(seed): threads did not finish")
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "seed \(seed): \(found.prefix(10).joined(separator: "\n"))")

        let report = try store.verify()
        #expect(report.isClean, "seed \(seed): \(report.problems.prefix(10))")
        let entries = try store.entries()
        #expect(try store.statistics().entryCount == entries.count)
        for info in entries where info.isComplete {
            let data = try #require(try store.data(forKey: info.key))
            #expect(data.count == info.length)
            #expect(isGenuine(data, key: info.key, whole: true), "seed \(seed): \(info.key)")
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
