import Foundation
import MediaSupport
import Testing

@testable import MediaStore

/// On iOS, tvOS, watchOS and visionOS a store runs LMDB with `MDB_NOLOCK`
/// and keeps LMDB's rules itself (``ProcessLocalLocks``, one process per
/// store through the maintenance lock). The same code runs here when
/// asked for, so these tests check it on Linux.
@Suite struct ProcessLocalLockingTests {
    let directory = temporaryPath("nolock")

    func open(readOnly: Bool = false) throws -> MediaStore {
        try MediaStore(
            directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20), readOnly: readOnly,
            keyHash: nil, processLocalLocking: true)
    }

    @Test func runsWithoutLMDBsLockFileAndKeepsItsData() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 140)
        let value = generator.bulkBytes(700_000)
        do {
            let store = try open()
            #expect(store.environment.processLocalLocks != nil)
            try store.put(value, forKey: "track")
            try store.put([1, 2, 3], forKey: "small")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!files.contains(StoreOpener.lockFileName))  // MDB_NOLOCK: no lock file, no semaphores
        let store = try open()
        #expect(try store.data(forKey: "track") == Data(value))
        #expect(try store.data(forKey: "small") == Data([1, 2, 3]))
        #expect(try store.verify().isClean)
    }

    /// Without LMDB's reader table nothing could protect a second
    /// process's snapshots, so one store at a time may be open: another
    /// open (any process; the same flock stops them) is refused, and so is
    /// compaction, until the store is released.
    @Test func anotherOpenIsRefusedWhileTheStoreIsOpen() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var store: MediaStore? = try open()
        try store?.put([9], forKey: "k")
        #expect(MaintenanceLock.exclusive(directory: directory) == nil)
        #expect(throws: StoreError.alreadyOpen(path: directory.path)) { _ = try open() }
        #expect(throws: StoreError.alreadyOpen(path: directory.path)) { _ = try open(readOnly: true) }
        #expect(throws: AdministrationError.self) { _ = try MediaStore.compact(directory: directory) }
        store = nil
        let reader = try open(readOnly: true)
        #expect(try reader.data(forKey: "k") == Data([9]))
    }

    /// A missing directory opened read-only is not created, and a
    /// directory of other files gets no lock file.
    @Test func aFailedOpenLeavesNothingBehind() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(throws: StoreError.self) { _ = try open(readOnly: true) }
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data([1]).write(to: directory.appendingPathComponent("notes.txt"))
        #expect(throws: StoreError.self) { _ = try open() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["notes.txt"])
    }

    /// A writer waits for readers of an older snapshot, not for readers of
    /// the newest one, and goes on once the old one ends.
    @Test func aWriterWaitsOnlyForReadersOfOlderSnapshots() async throws {
        let locks = ProcessLocalLocks()
        #expect(locks.beginReader { 7 } == 7)
        #expect(locks.beginReader { 8 } == 8)
        #expect(locks.beginReader { nil } == nil)  // a failed begin registers nothing
        #expect(locks.readerCount == 2)
        let waited = Locked(false)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            locks.beginWriter()
            locks.waitForOlderReaders(newest: 8)
            waited.withLock { $0 = true }
            locks.endWriter()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut)  // snapshot 7 is older than 8
        #expect(!waited.withLock { $0 })
        locks.endReader(snapshot: 7)
        #expect(done.wait(timeout: .now() + 10) == .success)  // snapshot 8 does not hold it
        #expect(locks.readerCount == 1)
    }

    /// Readers on several threads read while one writer keeps replacing
    /// multi-chunk values, so freed pages are reused all the time: every
    /// value read must be whole and one that was written.
    @Test func readersSeeWholeValuesWhileAWriterReusesPages() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try open()
        let keys = (0..<4).map { "https://example.com/\($0)" }
        for key in keys {
            try store.put(ThreadTests.content(key: key, variant: 0, length: 300_000), forKey: key)
        }
        let stop = Locked(false)
        let failures = Locked<[String]>([])
        let readers = DispatchGroup()
        let reads = Locked(0)
        for reader in 0..<4 {
            DispatchQueue.global().async(group: readers) {
                var index = reader
                while !stop.withLock({ $0 }) {
                    let key = keys[index % keys.count]
                    index += 1
                    do {
                        guard let data = try store.data(forKey: key) else { continue }
                        if !ThreadTests.isGenuine(data, key: key, whole: true) || data.count < 100_000 {
                            failures.withLock { $0.append("\(key): \(data.count) bytes not as written") }
                        }
                        reads.withLock { $0 += 1 }
                    } catch {
                        failures.withLock { $0.append("\(key): \(error)") }
                    }
                }
            }
        }
        var generator = SplitMix64(seed: 141)
        // At least 240 replacements, and on until the readers have read 200
        // values (they are slower than the writer on a loaded machine), for
        // at most 30 s.
        let deadline = Date().addingTimeInterval(30)
        var version = 0
        while version < 240 || (reads.withLock { $0 } < 200 && Date() < deadline) {
            version += 1
            let key = keys[Int(generator.next() % UInt64(keys.count))]
            let length = 100_000 + Int(generator.next() % 400_000)
            try store.put(
                ThreadTests.content(key: key, variant: UInt8(truncatingIfNeeded: version), length: length), forKey: key)
        }
        stop.withLock { $0 = true }
        readers.wait()
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        #expect(reads.withLock { $0 } > 100)
        #expect(store.environment.processLocalLocks?.readerCount == 0)
        #expect(try store.verify().isClean)
    }
}
