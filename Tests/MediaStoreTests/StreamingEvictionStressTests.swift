import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// The concurrency stress test that `Tools/sanitizers` runs under Thread
/// Sanitizer: eight threads mix whole puts, whole and chunk-by-chunk
/// reads, range fills, batches, pinning, explicit eviction and expiry
/// sweeps with streaming writers that stay open across many of those
/// operations and move between threads (through a shared pool), so that
/// eviction and sweeps run while writers hold staged chunks.
// Six minutes: under TSan on 2 cores these run 3–4 minutes.
@Suite(.timeLimit(.minutes(6))) struct StreamingEvictionStressTests {
    static let threads = 8
    static let operationsPerThread = 250
    static let chunk = 8_192
    static let sizeLimit = 200_000
    static let keys = (0..<8).map { "https://example.com/stress/\($0)" }

    /// A streaming write in progress: the writer, its whole content and
    /// how much of it has been appended. Used by one thread at a time (the
    /// pool's lock hands it over).
    final class OpenWrite: @unchecked Sendable {
        let writer: EntryWriter
        let bytes: [UInt8]
        var position = 0

        init(writer: EntryWriter, bytes: [UInt8]) {
            self.writer = writer
            self.bytes = bytes
        }
    }

    static func run(
        store: MediaStore, thread: Int, seed: UInt64, pool: Locked<[OpenWrite]>, failures: Locked<[String]>
    ) {
        var random = SplitMix64(seed: seed &+ UInt64(thread) &* 0x9E37_79B9)
        func fail(_ message: String) { failures.withLock { $0.append("thread \(thread): \(message)") } }
        func content(_ key: String, _ length: Int) -> [UInt8] {
            ThreadTests.content(key: key, variant: .random(in: 0...0x7F, using: &random), length: length)
        }
        for step in 0..<operationsPerThread {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                switch roll {
                case 0..<14:  // whole put
                    try store.put(content(key, Int.random(in: 32...40_000, using: &random)), forKey: key)
                case 14..<24:  // open a streaming writer and leave it in the pool
                    let bytes = content(key, Int.random(in: 32...60_000, using: &random))
                    let writer = try store.makeWriter(forKey: key, expectedLength: bytes.count)
                    pool.withLock { $0.append(OpenWrite(writer: writer, bytes: bytes)) }
                case 24..<40:  // take any open writer (maybe another thread's) and advance it
                    guard let open = pool.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                    let piece = min(open.bytes.count - open.position, Int.random(in: 1...12_000, using: &random))
                    try open.writer.append(open.bytes[open.position..<open.position + piece])
                    open.position += piece
                    if open.position == open.bytes.count {
                        let info = try open.writer.finish()
                        if info.length != open.bytes.count { fail("step \(step): finished \(info.length ?? -1) bytes") }
                    } else if Int.random(in: 0..<10, using: &random) == 0 {
                        open.writer.cancel()
                    } else {
                        pool.withLock { $0.append(open) }
                    }
                case 40..<52:  // whole read
                    if let data = try store.data(forKey: key), !ThreadTests.isGenuine(data, key: key, whole: true) {
                        fail("step \(step): torn value of \(data.count) bytes for \(key)")
                    }
                case 52..<60:  // chunk by chunk from the start, with eviction protection
                    guard let info = try store.info(forKey: key), info.isComplete, let length = info.length else {
                        continue
                    }
                    var streamed = Data()
                    // Each chunk is its own transaction; bound to the version
                    // it was sized from, a replacement between chunks stops
                    // the read, so the bytes are always one whole content.
                    try store.read(forKey: key, range: 0..<length, version: info.version) { streamed.append($0) }
                    if !ThreadTests.isGenuine(streamed, key: key, whole: true) {
                        fail("step \(step): torn stream of \(key)")
                    }
                case 60..<72:  // range fill: two contents per length, told apart by ETag
                    let length = [24_000, 41_000][Int.random(in: 0...1, using: &random)]
                    let (id, options) = ThreadTests.sparseContent(
                        variant: .random(in: 0...1, using: &random), length: length)
                    let bytes = SelfDescribingBytes.content(key: ThreadTests.keyID(key), id: id)
                    let version = try store.prepareEntry(forKey: key, length: length, options: options).version
                    let start = Int.random(in: 0..<((length + chunk - 1) / chunk), using: &random) * chunk
                    try store.write(bytes[start..<min(length, start + chunk)], at: start, forKey: key, version: version)
                case 72..<78:  // a leased range read while others evict
                    let lease = store.lease(forKey: key)
                    let start = Int.random(in: 0..<20_000, using: &random)
                    let data = try withExtendedLifetime(lease) {
                        try store.read(forKey: key, range: start..<start + Int.random(in: 32...20_000, using: &random))
                    }
                    // One read is one transaction, and a version holds one
                    // content (fills are bound to it), so its bytes are exact.
                    let verdict = SelfDescribingBytes.decode(data, at: start, key: ThreadTests.keyID(key))
                    if case .content = verdict {
                    } else {
                        fail("step \(step): torn leased range of \(key): \(data.count) bytes at \(start): \(verdict)")
                    }
                case 78..<84:
                    _ = try store.evict(toBytes: Int.random(in: 0...sizeLimit, using: &random))
                case 84..<89:
                    try store.setPinned(Int.random(in: 0...1, using: &random) == 0, forKey: key)
                case 89..<93:  // a batch of two puts and a remove
                    let other = keys[Int.random(in: 0..<keys.count, using: &random)]
                    let first = content(key, Int.random(in: 32...9_000, using: &random))
                    let second = content(other, Int.random(in: 32...9_000, using: &random))
                    try store.performBatch { batch in
                        try batch.put(first, forKey: key)
                        try batch.put(second, forKey: other)
                        try batch.remove(forKey: keys[step % keys.count])
                    }
                case 93..<96:
                    try store.remove(forKey: key)
                case 96..<98:
                    _ = try store.statistics()
                    _ = try store.entries()
                    _ = try store.cachedRanges(forKey: key)
                default:
                    try store.removeExpired()
                    try store.flushAccessTimes()
                }
            } catch  where ThreadTests.isExpectedRace(error) || isLimit(error) {
                continue
            } catch {
                fail("step \(step) (roll \(roll)) on \(key): \(error)")
            }
        }
    }

    /// Appends the rest of an open write and finishes it; returns what
    /// went wrong, if anything but the size limit.
    static func finish(_ open: OpenWrite) -> String? {
        do {
            try open.writer.append(open.bytes[open.position...])
            _ = try open.writer.finish()
            return nil
        } catch {
            return isLimit(error) ? nil : "\(error)"
        }
    }

    /// A value may not fit once pinned entries fill the size limit.
    static func isLimit(_ error: Error) -> Bool {
        if case .entryTooLarge = error as? StoreError { return true }
        return false
    }

    @Test func streamingWritersAmidEvictionOnEightThreads() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let t = try TestStore.inMemoryFileSystem(
            configuration: StoreConfiguration(
                sizeLimit: Self.sizeLimit, countLimit: 6, defaultLifetime: 3_600, chunkSize: Self.chunk,
                initialMapSize: 2 << 20))
        let store = t.store!
        let failures = Locked<[String]>([])
        let pool = Locked<[OpenWrite]>([])
        let group = DispatchGroup()
        for thread in 0..<Self.threads {
            group.enter()
            Thread {
                Self.run(store: store, thread: thread, seed: seed, pool: pool, failures: failures)
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + 300) == .success, "seed \(seed): threads did not finish")
        let found = failures.withLock { $0 }
        #expect(found.isEmpty, "seed \(seed): \(found.prefix(10).joined(separator: "\n"))")

        // Writers still open: half finish, half are cancelled.
        let leftovers = pool.withLock { pool -> [OpenWrite] in
            let all = pool
            pool.removeAll()
            return all
        }
        for index in leftovers.indices {
            if index % 2 == 0 {
                let failure = Self.finish(leftovers[index])
                #expect(failure == nil, "seed \(seed): \(failure ?? "")")
            } else {
                leftovers[index].writer.cancel()
            }
        }

        let report = try store.verify()
        #expect(report.isClean, "seed \(seed): \(report.problems.prefix(10))")
        for info in try store.entries() where info.isComplete {
            let data = try #require(try store.data(forKey: info.key))
            #expect(data.count == info.length)
            #expect(ThreadTests.isGenuine(data, key: info.key, whole: true), "seed \(seed): \(info.key)")
        }
        // Unpinned and evicted to nothing, no chunk may be left behind.
        for key in Self.keys { try? store.setPinned(false, forKey: key) }
        _ = try store.evict(toBytes: 0)
        let stats = try store.statistics()
        #expect(stats.entryCount == 0 && stats.storedBytes == 0, "seed \(seed): \(stats)")
        #expect(try store.verify().isClean, "seed \(seed)")
    }
}
