import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// Issue 8 §1: two threads fill the same keys with contents of different
/// lengths (each prepare says which content it is, by ETag), in random
/// chunk order, while two readers read whole values, cached ranges, chunk
/// by chunk and after each completion. Every byte says which key, content
/// and offset it is (``SelfDescribingBytes``), so every read is checked
/// exactly: it must be one content, right at every offset. A few seconds
/// in the suite; `Tools/version-stress [seconds]` runs it long
/// (`VERSION_STRESS_SECONDS`).
@Suite struct VersionStressTests {
    static let chunk = 4_096
    static let lengths = [24_000, 41_000]
    static let keys: [UInt16] = [0, 1]
    static func name(_ key: UInt16) -> String { "https://example.com/version-stress/\(key)" }

    static var seconds: Double {
        ProcessInfo.processInfo.environment["VERSION_STRESS_SECONDS"].flatMap(Double.init) ?? 3
    }

    struct Tally {
        var rounds = 0
        var prepared: [Int: Int] = [:]  // by length
        var completed: [Int: Int] = [:]  // by length
        /// Fills refused with entryReplaced, and those refused after at
        /// least one chunk of the fill went in ...
        var replaced = 0
        var replacedMidFill = 0
        /// ... because the other thread prepared the other length.
        var replacedByOtherLength = 0
        /// Fills that found their version already partly filled by the other thread (same content).
        var sharedFills = 0
        var wholeReads = 0
        var rangeReads = 0
        var chunkedReads = 0
        var afterCompletionReads = 0
        var undecidable = 0
        var mixed = 0
        var failures: [String] = []

        var readsChecked: Int { wholeReads + rangeReads + chunkedReads + afterCompletionReads }

        /// Whether the run met the premises the test asserts: both lengths
        /// prepared and completed, fills replaced midway and by the other
        /// length, every kind of read.
        var premisesMet: Bool {
            VersionStressTests.lengths.allSatisfy { prepared[$0, default: 0] > 0 && completed[$0, default: 0] > 0 }
                && replacedMidFill > 0 && replacedByOtherLength > 0 && wholeReads > 0 && rangeReads > 0
                && chunkedReads > 0 && afterCompletionReads > 0
        }
    }

    /// Whether the threads go on: until `deadline`, and then up to 30 s
    /// more while a premise is still unmet (a replacement by the other
    /// length is a race that a few seconds on a busy machine can miss).
    static func goesOn(_ deadline: Date, _ tally: Locked<Tally>) -> Bool {
        let now = Date()
        return now < deadline || (now < deadline.addingTimeInterval(30) && !tally.withLock { $0.premisesMet })
    }

    /// Errors a racing call may meet: the entry changed between calls.
    static func isRace(_ error: Error) -> Bool {
        switch error as? StoreError {
        case .notFound, .rangeNotCached, .invalidRange, .changedDuringRead, .entryReplaced: true
        default: false
        }
    }

    /// Checks bytes read at `offset` of `key`; returns the content they are.
    @discardableResult
    static func check(
        _ data: some Collection<UInt8>, at offset: Int, key: UInt16, what: String, tally: Locked<Tally>,
        exactly expected: UInt32? = nil, wholeLength: Bool = false
    ) -> UInt32? {
        let verdict = SelfDescribingBytes.decode(data, at: offset, key: key)
        var problem: String?
        var found: UInt32?
        switch verdict {
        case .undecidable:
            tally.withLock { $0.undecidable += 1 }
            return nil
        case .wrong(let reason):
            problem = reason
        case .content(let id):
            found = id
            if let expected, id != expected { problem = "content \(id), expected \(expected)" }
            if wholeLength, data.count != SelfDescribingBytes.length(of: id) {
                problem = "\(data.count) bytes of content \(id) of length \(SelfDescribingBytes.length(of: id))"
            }
        }
        if let problem {
            tally.withLock {
                $0.mixed += 1
                if $0.failures.count < 20 { $0.failures.append("\(what) of key \(key) at \(offset): \(problem)") }
            }
            return nil
        }
        return found
    }

    /// One filler: prepares a content and fills it in random chunk order
    /// until it completes or is replaced; again until `deadline`.
    static func fill(store: MediaStore, thread: Int, seed: UInt64, deadline: Date, tally: Locked<Tally>) {
        var random = SplitMix64(seed: seed &+ UInt64(thread) &* 0x9E37_79B9)
        func fail(_ message: String) { tally.withLock { $0.failures.append("filler \(thread): \(message)") } }
        while goesOn(deadline, tally) {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let length = lengths[Int.random(in: 0..<lengths.count, using: &random)]
            let id = SelfDescribingBytes.contentID(variant: UInt8.random(in: 0...1, using: &random), length: length)
            let content = SelfDescribingBytes.content(key: key, id: id)
            tally.withLock { $0.rounds += 1 }
            do {
                if Int.random(in: 0..<20, using: &random) == 0 {
                    // Now and then a whole value or a removal replaces the entry too.
                    if Bool.random(using: &random) {
                        try store.put(content, forKey: name(key))
                    } else {
                        try store.remove(forKey: name(key))
                    }
                    continue
                }
                let prepared = try store.prepareEntry(
                    forKey: name(key), length: length, options: WriteOptions(metadata: EntryMetadata(etag: "\(id)")))
                tally.withLock { $0.prepared[length, default: 0] += 1 }
                if prepared.cachedBytes > 0 { tally.withLock { $0.sharedFills += 1 } }
                let chunks = (length + chunk - 1) / chunk
                var written = 0
                for index in (0..<chunks).shuffled(using: &random) {
                    let start = index * chunk
                    do {
                        let info = try store.write(
                            content[start..<min(length, start + chunk)], at: start, forKey: name(key),
                            version: prepared.version)
                        written += 1
                        if info.isComplete {
                            tally.withLock { $0.completed[length, default: 0] += 1 }
                            try checkCompleted(
                                store: store, key: key, id: id, version: prepared.version, tally: tally)
                            break
                        }
                    } catch StoreError.entryReplaced(_, _, let found) {
                        let now = found == nil ? nil : try? store.info(forKey: name(key))
                        tally.withLock {
                            $0.replaced += 1
                            if written > 0 { $0.replacedMidFill += 1 }
                            if written > 0, let other = now?.length, other != length { $0.replacedByOtherLength += 1 }
                        }
                        break
                    }
                    if Int.random(in: 0..<4, using: &random) == 0 { usleep(UInt32.random(in: 0...300, using: &random)) }
                }
            } catch  where isRace(error) {
                continue
            } catch {
                fail("key \(key), content \(id): \(error)")
            }
        }
    }

    /// Reads a version that just completed: bound to its version, the
    /// bytes must be exactly that content; unbound, one whole content.
    static func checkCompleted(store: MediaStore, key: UInt16, id: UInt32, version: UInt64, tally: Locked<Tally>)
        throws
    {
        var streamed: [UInt8] = []
        do {
            try store.read(forKey: name(key), range: 0..<SelfDescribingBytes.length(of: id), version: version) {
                streamed += $0
            }
            check(
                streamed, at: 0, key: key, what: "read after completion", tally: tally, exactly: id, wholeLength: true)
            tally.withLock { $0.afterCompletionReads += 1 }
        } catch  where isRace(error) {}
        if let data = try store.data(forKey: name(key)) {
            check(data, at: 0, key: key, what: "whole read after completion", tally: tally, wholeLength: true)
            tally.withLock { $0.afterCompletionReads += 1 }
        }
    }

    /// One reader: whole reads, cached ranges, chunk by chunk, until `deadline`.
    static func read(store: MediaStore, thread: Int, seed: UInt64, deadline: Date, tally: Locked<Tally>) {
        var random = SplitMix64(seed: seed &+ 0xABCD &+ UInt64(thread))
        while goesOn(deadline, tally) {
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            do {
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    if let data = try store.data(forKey: name(key)) {
                        check(data, at: 0, key: key, what: "whole read", tally: tally, wholeLength: true)
                        tally.withLock { $0.wholeReads += 1 }
                    }
                case 1:
                    // A cached range of whatever entry is there (often a partial one).
                    let ranges = try store.cachedRanges(forKey: name(key)).filter {
                        $0.count >= SelfDescribingBytes.decodableLength
                    }
                    guard let cached = ranges.randomElement(using: &random) else { continue }
                    let start = Int.random(
                        in: cached.lowerBound...(cached.upperBound - SelfDescribingBytes.decodableLength),
                        using: &random)
                    let end = Int.random(
                        in: (start + SelfDescribingBytes.decodableLength)...cached.upperBound, using: &random)
                    let data = try store.read(forKey: name(key), range: start..<end)
                    check(data, at: start, key: key, what: "range read", tally: tally)
                    tally.withLock { $0.rangeReads += 1 }
                default:
                    // Chunk by chunk, bound to the version the range was taken from.
                    guard let info = try store.info(forKey: name(key)), info.isComplete, let length = info.length
                    else { continue }
                    let start = Int.random(in: 0...(length - SelfDescribingBytes.decodableLength), using: &random)
                    var streamed: [UInt8] = []
                    try store.read(forKey: name(key), range: start..<length, version: info.version) {
                        streamed += $0
                    }
                    check(streamed, at: start, key: key, what: "chunked read", tally: tally)
                    tally.withLock { $0.chunkedReads += 1 }
                }
            } catch  where isRace(error) {
                continue
            } catch {
                tally.withLock { $0.failures.append("reader \(thread): \(error)") }
            }
        }
    }

    /// Runs two fillers and two readers for `seconds`; returns the tally
    /// after checking the store at the end.
    static func run(seconds: Double, seed: UInt64) throws -> Tally {
        let t = try TestStore.inMemoryFileSystem(
            configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20))
        let store = t.store!
        let tally = Locked(Tally())
        let deadline = Date().addingTimeInterval(seconds)
        let group = DispatchGroup()
        for thread in 0..<2 {
            group.enter()
            Thread {
                fill(store: store, thread: thread, seed: seed, deadline: deadline, tally: tally)
                group.leave()
            }.start()
            group.enter()
            Thread {
                read(store: store, thread: thread, seed: seed, deadline: deadline, tally: tally)
                group.leave()
            }.start()
        }
        #expect(group.wait(timeout: .now() + seconds + 90) == .success, "seed \(seed): threads did not finish")
        // Whatever is left: every entry one content, complete ones whole.
        for key in keys {
            guard let info = try store.info(forKey: name(key)) else { continue }
            for range in try store.cachedRanges(forKey: name(key)) {
                check(
                    try store.read(forKey: name(key), range: range), at: range.lowerBound, key: key, what: "final read",
                    tally: tally)
            }
            if info.isComplete, let data = try store.data(forKey: name(key)) {
                check(data, at: 0, key: key, what: "final whole read", tally: tally, wholeLength: true)
                #expect(ContentDigest(of: data) == info.contentDigest, "seed \(seed)")
            }
        }
        let report = try store.verify()
        #expect(report.isClean, "seed \(seed): \(report.problems.prefix(5))")
        return tally.withLock { $0 }
    }

    @Test func twoFillersOfDifferentLengthsNeverMixAVersion() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let seconds = Self.seconds
        let tally = try Self.run(seconds: seconds, seed: seed)
        print(
            "version stress: \(seconds) s, seed \(seed): \(tally.rounds) rounds, prepared \(tally.prepared), "
                + "completed \(tally.completed), entryReplaced \(tally.replaced) (mid-fill \(tally.replacedMidFill), "
                + "by the other length \(tally.replacedByOtherLength)), shared fills \(tally.sharedFills); "
                + "reads checked \(tally.readsChecked) (whole \(tally.wholeReads), range \(tally.rangeReads), "
                + "chunked \(tally.chunkedReads), after completion \(tally.afterCompletionReads)), "
                + "undecidable \(tally.undecidable), mixed \(tally.mixed)")
        #expect(tally.failures.isEmpty, "seed \(seed): \(tally.failures.prefix(10).joined(separator: "\n"))")
        #expect(tally.mixed == 0, "seed \(seed)")
        #expect(tally.undecidable == 0, "seed \(seed)")
        // The premises: both lengths were prepared and completed, fills
        // really were cut short by the other length, every kind of read ran.
        for length in Self.lengths {
            #expect(tally.prepared[length, default: 0] > 0, "seed \(seed): length \(length) never prepared")
            #expect(tally.completed[length, default: 0] > 0, "seed \(seed): length \(length) never completed")
        }
        #expect(tally.replacedMidFill > 0, "seed \(seed): no fill was replaced midway")
        #expect(tally.replacedByOtherLength > 0, "seed \(seed): no fill was replaced by the other length")
        #expect(tally.wholeReads > 0 && tally.rangeReads > 0 && tally.chunkedReads > 0, "seed \(seed)")
        #expect(tally.afterCompletionReads > 0, "seed \(seed)")
    }
}
