import Foundation
import LoopbackNginx
import MediaSupport
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 8, part 2: a damaged store never crashes an app twice, a healthy
/// one is never discarded, and `close()` ends a store deterministically.
@Suite(.serialized) struct RecoveryTests {
    static let configuration = StoreConfiguration(initialMapSize: 64 << 20)

    /// A closed store with `count` incompressible entries of 100 KB (each
    /// chunk an overflow value in LMDB). `plain` for a store the
    /// crash-writer app opens (it gives no key).
    static func makeStore(_ directory: URL, count: Int = 12, plain: Bool = false) throws {
        let store =
            plain
            ? try MediaStore(directory: directory, configuration: configuration)
            : try TestStore.open(directory: directory, configuration: configuration)
        var generator = SplitMix64(seed: 8)
        for index in 0..<count { try store.put(generator.bytes(100_000), forKey: "track-\(index)") }
        store.close()
    }

    // MARK: close()

    @Test func closeThenReopenInTheSameProcess() throws {
        let directory = temporaryPath("close")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TestStore.open(directory: directory, configuration: Self.configuration)
        try store.put(Array("hello".utf8), forKey: "k")
        _ = try store.data(forKey: "k")  // a pending access time, written by close()
        store.close()
        store.close()  // harmless
        #expect(throws: StoreError.closed) { try store.data(forKey: "k") }
        #expect(throws: StoreError.closed) { try store.put([1], forKey: "k2") }
        #expect(throws: StoreError.closed) { try store.statistics() }
        #expect(throws: StoreError.closed) { try store.entries() }
        #expect(store.readers().isEmpty)
        #expect(store.clearStaleReaders() == 0)

        // No waiting: the directory is free at once, and the session is clean.
        let reopened = try TestStore.open(directory: directory, configuration: Self.configuration)
        #expect(try reopened.data(forKey: "k") == Data("hello".utf8))
        #expect(reopened.uncleanSessions == 0)
        #expect(reopened.recovery == nil)
        withExtendedLifetime(store) {}
    }

    @Test func closeWaitsForReadsAndWritesUnderWay() throws {
        let directory = temporaryPath("close-busy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TestStore.open(directory: directory, configuration: Self.configuration)
        try store.put([UInt8](repeating: 7, count: 50_000), forKey: "k")
        let outcomes = Locked<[String]>([])
        let done = DispatchGroup()
        // Threads, not tasks: the workers block, and the pool may have two threads.
        for worker in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                while true {
                    do {
                        if worker % 2 == 0 {
                            #expect(try store.data(forKey: "k")?.count == 50_000)
                        } else {
                            try store.put([UInt8](repeating: 7, count: 50_000), forKey: "k")
                        }
                    } catch {
                        outcomes.withLock { $0.append("\(error)") }
                        return
                    }
                }
            }
        }
        Thread.sleep(forTimeInterval: 0.05)
        store.close()
        #expect(done.wait(timeout: .now() + 60) == .success)
        // Every worker stopped with the typed error, none with anything else.
        #expect(outcomes.withLock { $0 } == Array(repeating: StoreError.closed.description, count: 4))
        let reopened = try TestStore.open(directory: directory, configuration: Self.configuration)
        #expect(try reopened.data(forKey: "k") == Data(repeating: 7, count: 50_000))
    }

    @Test func sharedOpensANewStoreAfterClose() throws {
        let directory = temporaryPath("shared-close")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try MediaStore.shared(directory: directory, configuration: Self.configuration)
        #expect(try MediaStore.shared(directory: directory) === first)
        try first.put([1, 2, 3], forKey: "k")
        first.close()
        let second = try MediaStore.shared(directory: directory, configuration: Self.configuration)
        #expect(second !== first)
        #expect(try second.data(forKey: "k") == Data([1, 2, 3]))
        second.close()
    }

    // MARK: The session marker and the checks

    @Test func sessionRecordRoundTripsAndToleratesGarbage() {
        let record = StoreSession.Record(isOpen: true, uncleanSessions: 3)
        #expect(StoreSession.Record(text: record.text(pid: 42)) == record)
        #expect(StoreSession.Record(text: StoreSession.Record.closed.text(pid: 1)) == .closed)
        #expect(StoreSession.Record(text: "state=open\nunclean=-1\n") == nil)
        #expect(StoreSession.Record(text: "\u{0}\u{1}garbage") == nil)
    }

    @Test func healthyStorePassesTheWalk() throws {
        let directory = temporaryPath("walk")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16 << 10, initialMapSize: 64 << 20))
        var generator = SplitMix64(seed: 1)
        // Enough small and large entries for branch pages, a free list and
        // overflow values; then removals, so that pages are reused.
        for index in 0..<3000 {
            try store.put(generator.bytes(index % 10 == 0 ? 40_000 : 200), forKey: "key-\(index)")
        }
        for index in stride(from: 0, to: 3000, by: 3) { #expect(try store.remove(forKey: "key-\(index)")) }
        store.close()
        let path = directory.appendingPathComponent("data.mdb").path
        #expect(StoreFileCheck.damage(path: path) == nil)
    }

    @Test func walkFindsADamagedOverflowPointerAndABadPageHeader() throws {
        let directory = temporaryPath("walk-damage")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.makeStore(directory)
        let path = directory.appendingPathComponent("data.mdb").path
        let original = try Data(contentsOf: URL(fileURLWithPath: path))

        try DamagedFile.pointFirstChunkOutsideTheFile(path)
        let reason = try #require(StoreFileCheck.damage(path: path))
        #expect(reason.contains("database chunks"), "\(reason)")

        try original.write(to: URL(fileURLWithPath: path))
        try DamagedFile.scribbleOnRootOfChunks(path)
        #expect(StoreFileCheck.damage(path: path) != nil)

        try original.write(to: URL(fileURLWithPath: path))
        try DamagedFile.makeFirstChunkHuge(path)
        #expect(StoreFileCheck.damage(path: path)?.contains("outside pages") == true)

        try original.write(to: URL(fileURLWithPath: path))
        #expect(StoreFileCheck.damage(path: path) == nil)
    }

    @Test func damageIsMovedAsideOnlyAfterAnUncleanSession() throws {
        let directory = temporaryPath("aside")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.makeStore(directory)
        let path = directory.appendingPathComponent("data.mdb").path
        try DamagedFile.pointFirstChunkOutsideTheFile(path)
        // The previous session ended cleanly: no walk, the store opens as it is.
        do {
            let store = try TestStore.open(directory: directory, configuration: Self.configuration)
            #expect(store.recovery == nil)
            #expect(try store.entries().count == 12)
            store.close()
        }
        // A session that died with the store open.
        let marker = directory.appendingPathComponent(StoreSession.fileName)
        try StoreSession.Record(isOpen: true, uncleanSessions: 0).text(pid: 1).write(
            to: marker, atomically: false, encoding: .utf8)
        let store = try TestStore.open(directory: directory, configuration: Self.configuration)
        let recovery = try #require(store.recovery)
        #expect(recovery.uncleanSessions == 1)
        #expect(store.uncleanSessions == 1)
        #expect(try store.entries().isEmpty)
        #expect(recovery.damagedCopy.deletingLastPathComponent().path == directory.path)
        #expect(FileManager.default.fileExists(atPath: recovery.damagedCopy.appendingPathComponent("data.mdb").path))
        let note = try String(contentsOf: recovery.damagedCopy.appendingPathComponent("reason.txt"), encoding: .utf8)
        #expect(note.contains(recovery.reason))
        // The new store works, and the copy beside it does not make the directory foreign.
        try store.put([9], forKey: "new")
        store.close()
        let again = try TestStore.open(directory: directory, configuration: Self.configuration)
        #expect(again.recovery == nil)
        #expect(try again.data(forKey: "new") == Data([9]))
        again.close()
    }

    @Test func truncatedStoreIsMovedAsideAndOnlyThreeCopiesAreKept() throws {
        let directory = temporaryPath("copies")
        defer { try? FileManager.default.removeItem(at: directory) }
        var copies: [URL] = []
        for round in 0..<5 {
            try Self.makeStore(directory, count: 2)
            // A truncated file fails the meta-page check, which runs at every open.
            let path = directory.appendingPathComponent("data.mdb").path
            #expect(truncate(path, 3 * 4096) == 0)
            let store = try TestStore.open(directory: directory, configuration: Self.configuration)
            let recovery = try #require(store.recovery, "round \(round)")
            #expect(recovery.reason.contains("truncated"))
            #expect(recovery.uncleanSessions == 0)
            copies.append(recovery.damagedCopy)
            if round >= MediaStore.keptDamagedCopies {
                #expect(
                    recovery.removedCopies.map(\.lastPathComponent)
                        == [copies[round - MediaStore.keptDamagedCopies].lastPathComponent])
            }
            store.close()
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("damaged-") }.sorted()
        #expect(left == copies.suffix(MediaStore.keptDamagedCopies).map(\.lastPathComponent))
    }

    @Test func readOnlyOpenNeverMovesAnythingAside() throws {
        let directory = temporaryPath("readonly-damage")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.makeStore(directory, count: 2)
        #expect(truncate(directory.appendingPathComponent("data.mdb").path, 3 * 4096) == 0)
        #expect(throws: StoreError.self) { try MediaStore.openReadOnly(directory: directory) }
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path))
    }

    // MARK: The meta-page pair at a read-write open

    /// A closed store of two entries whose older meta page's transaction
    /// id was raised above the newer one's: LMDB would open the commit
    /// before the last put. Returns the damaged file's bytes.
    static func makeStoreWithAClimbedMetaPage(_ directory: URL) throws -> Data {
        try makeStore(directory, count: 2)
        let path = directory.appendingPathComponent("data.mdb").path
        #expect(MetaPageCheck.damage(path: path) == nil)
        try DamagedFile.raiseOlderMetaPage(path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The read-write open used to skip the meta-page pair (only `verify()`
    /// compared the pages): it opened the older commit, and its first
    /// commit would have overwritten the newest one for good. Alone, it now
    /// moves the store aside untouched, as for any damage found at opening.
    @Test func metaPagePairDamageIsMovedAsideAtAReadWriteOpen() throws {
        let directory = temporaryPath("meta-pair")
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = try Self.makeStoreWithAClimbedMetaPage(directory)
        let store = try TestStore.open(directory: directory, configuration: Self.configuration)
        defer { store.close() }
        let recovery = try #require(store.recovery, "the store was opened at an older commit")
        #expect(recovery.reason.contains("LMDB's meta pages are damaged"), "\(recovery.reason)")
        #expect(recovery.uncleanSessions == 0)
        #expect(try store.entries().isEmpty)
        // The copy is the file as it was: its newest commit was not written over.
        #expect(try Data(contentsOf: recovery.damagedCopy.appendingPathComponent("data.mdb")) == damaged)
    }

    /// Another process has the store open, so it is not moved aside: the
    /// open is refused, and the file left as it was.
    @Test func metaPagePairDamageIsRefusedWhileAnotherStoreHasItOpen() throws {
        let directory = temporaryPath("meta-pair-shared")
        defer { try? FileManager.default.removeItem(at: directory) }
        let damaged = try Self.makeStoreWithAClimbedMetaPage(directory)
        // What another process's open store holds.
        let other = try #require(MaintenanceLock.shared(directory: directory))
        let error = #expect(throws: StoreError.self, "the store was opened at an older commit") {
            try TestStore.open(directory: directory, configuration: Self.configuration)
        }
        if case .damagedStore(let reason) = error {
            #expect(reason.contains("LMDB's meta pages are damaged"), "\(reason)")
        } else {
            Issue.record("expected damagedStore, got \(String(describing: error))")
        }
        withExtendedLifetime(other) {}
        #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == damaged)
        #expect(StoreOpener.damagedCopies(in: directory).isEmpty)
    }

    // MARK: A child process app

    /// Committed FuzzStoreFile inputs whose B-tree pages are damaged so
    /// that LMDB faults on them: SIGSEGV and SIGBUS (checked below).
    static let faultingInputs = [
        "64a8ece324f10c505ab299030c6c1f6289e1f1b6", "0a765197ec8e0e41acb5a41f00629235435b47e1",
    ]

    @Test(arguments: faultingInputs)
    func damagedStoreCrashesTheAppOnceThenOpensEmpty(input: String) throws {
        let app = try #require(CrashWriterBinary.locate(), "crash-writer is not built beside the tests")
        let directory = temporaryPath("app-damage")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CacheToolTests/Fuzz/FuzzStoreFile/\(input)")
        try FileManager.default.copyItem(at: corpus, to: directory.appendingPathComponent("data.mdb"))

        // First launch: the meta pages are fine, LMDB follows a damaged page and the app dies.
        let first = try AppRun(app, directory, mode: "close")
        // Under Address Sanitizer (`Tools/sanitizers asan`) the child, built the same
        // way, reports the fault and exits with status 1 instead of dying of it.
        #expect(
            first.signal == SIGSEGV || first.signal == SIGBUS || (AppRun.underAddressSanitizer && first.status == 1),
            "\(first)")

        // Second launch: the unclean session triggers the walk; the app starts empty.
        let second = try AppRun(app, directory, mode: "close")
        #expect(second.status == 0 && second.signal == nil, "\(second)")
        let line = try #require(second.lines.first)
        #expect(line.hasPrefix("opened entries=0 unclean=1 recovery=page_"), "\(line)")
        let copy = try #require(line.split(separator: " ").last?.dropFirst("copy=".count))
        #expect(FileManager.default.fileExists(atPath: copy + "/data.mdb"))

        // Third launch: clean.
        let third = try AppRun(app, directory, mode: "close")
        #expect(third.lines.first == "opened entries=0 unclean=0 recovery=- copy=-", "\(third)")
    }

    @Test func sigkilledHealthyAppKeepsItsStore() throws {
        let app = try #require(CrashWriterBinary.locate(), "crash-writer is not built beside the tests")
        let directory = temporaryPath("app-kill")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.makeStore(directory, plain: true)
        for kill in 0..<3 {
            let run = try AppRun(app, directory, mode: "hang")
            #expect(run.signal == SIGKILL, "\(run)")
            #expect(run.lines.first == "opened entries=12 unclean=\(kill) recovery=- copy=-", "\(run)")
            #expect(run.lines.last == "read 1200000", "\(run)")
        }
        let last = try AppRun(app, directory, mode: "close")
        #expect(last.status == 0 && last.signal == nil)
        #expect(last.lines == ["opened entries=12 unclean=3 recovery=- copy=-", "read 1200000"], "\(last)")
        let after = try AppRun(app, directory, mode: "close")
        #expect(after.lines.first == "opened entries=12 unclean=0 recovery=- copy=-", "\(after)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasPrefix("damaged-") }
        )
    }

    @Test func anotherProcessHoldingTheStoreOpenIsNotAnUncleanSession() throws {
        let app = try #require(CrashWriterBinary.locate(), "crash-writer is not built beside the tests")
        let directory = temporaryPath("app-shared")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Self.makeStore(directory, plain: true)
        // A live app has the store open (its marker says open) ...
        let outputFile = directory.path + ".out"
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let child = try ChildProcess(app.path, ["app", directory.path, "hang"], standardOutput: outputFile)
        let output = ChildOutput.poll(outputFile, running: { child.isRunning }) { $0.contains("read ") }
        #expect(output.hasPrefix("opened entries=12 unclean=0"), "\(output)")
        // ... so this open neither counts an unclean session nor walks, and
        // its close leaves the marker open for the live app.
        let store = try MediaStore(directory: directory, configuration: Self.configuration)
        #expect(store.uncleanSessions == 0)
        #expect(store.recovery == nil)
        #expect(try store.entries().count == 12)
        store.close()
        let marker = try String(
            contentsOf: directory.appendingPathComponent(StoreSession.fileName), encoding: .utf8)
        #expect(StoreSession.Record(text: marker)?.isOpen == true, "\(marker)")
        child.kill(SIGKILL)
        child.waitUntilExit()
        // The app died with it open: the next open counts it.
        let after = try MediaStore(directory: directory, configuration: Self.configuration)
        #expect(after.uncleanSessions == 1)
        #expect(after.recovery == nil)
        #expect(try after.entries().count == 12)
        after.close()
    }
}

/// One launch of `crash-writer app`: in `hang` mode it is killed with
/// SIGKILL once it has read everything.
struct AppRun: CustomStringConvertible {
    /// Whether this process (and so the app, built the same way) runs under
    /// Address Sanitizer: its runtime is linked in.
    static let underAddressSanitizer = dlsym(nil, "__asan_init") != nil

    var lines: [String] = []
    var status: Int32 = 0
    var signal: Int32?

    init(_ app: URL, _ directory: URL, mode: String) throws {
        let outputFile = directory.path + "-app-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let process = try ChildProcess(app.path, ["app", directory.path, mode], standardOutput: outputFile)
        if mode == "hang" {
            // Killed once it has read everything (or has waited 30 s for that: its lines tell).
            _ = ChildOutput.poll(outputFile, running: { process.isRunning }) { $0.contains("read ") }
            process.kill(SIGKILL)
        }
        process.waitUntilExit()
        lines = ChildOutput.text(outputFile).split(separator: "\n").map(String.init)
        if process.endedBySignal == true {
            signal = process.terminationStatus
        } else {
            status = process.terminationStatus ?? 0
        }
    }

    var description: String { "status \(status), signal \(signal.map(String.init) ?? "none"), output \(lines)" }
}

/// Damage made to a store file on purpose, found by following the file's
/// own pages (64-bit LMDB 0.9 layout; see StoreFileCheck).
enum DamagedFile {
    private static func load(_ bytes: [UInt8], _ offset: Int, _ size: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }

    /// The page size, and the page number and byte offset in `data.mdb` of
    /// the `chunks` database's root.
    private static func chunksRoot(_ bytes: [UInt8]) throws -> (pageSize: Int, root: Int, recordOffset: Int) {
        let pageSize = Int(load(bytes, 16 + 24, 4))
        let metas = (0..<2).map { $0 * pageSize }
        let meta = metas.max { load(bytes, $0 + 16 + 128, 8) < load(bytes, $1 + 16 + 128, 8) }!
        let mainRoot = Int(load(bytes, meta + 16 + 72 + 40, 8))
        let page = mainRoot * pageSize
        let count = (Int(load(bytes, page + 12, 2)) - 16) / 2
        for index in 0..<count {
            let node = page + Int(load(bytes, page + 16 + 2 * index, 2))
            let keySize = Int(load(bytes, node + 6, 2))
            if String(decoding: bytes[node + 8..<node + 8 + keySize], as: UTF8.self) == "chunks" {
                let record = node + 8 + keySize
                return (pageSize, Int(load(bytes, record + 40, 8)), record)
            }
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    /// Makes the first overflow value of `chunks` point 2^40 pages away
    /// (LMDB refuses that one: `MDB_PAGE_NOTFOUND`).
    static func pointFirstChunkOutsideTheFile(_ path: String) throws {
        try editFirstChunkNode(path) { bytes, node, pointer in
            for byte in 0..<8 {
                bytes[pointer + byte] = UInt8(truncatingIfNeeded: (UInt64(1) << 40) >> (8 * UInt64(byte)))
            }
        }
    }

    /// Makes the first overflow value of `chunks` claim 4 GB: LMDB hands
    /// out a pointer into its map with that size, and reading it faults.
    static func makeFirstChunkHuge(_ path: String) throws {
        try editFirstChunkNode(path) { bytes, node, _ in
            for byte in 0..<4 { bytes[node + byte] = 0xF0 }
        }
    }

    private static func editFirstChunkNode(_ path: String, _ edit: (inout [UInt8], Int, Int) -> Void) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (pageSize, root, _) = try chunksRoot(bytes)
        var page = root * pageSize
        while load(bytes, page + 10, 2) & 1 != 0 {  // branch: follow the first child
            let node = page + Int(load(bytes, page + 16, 2))
            page = Int(load(bytes, node, 2) | load(bytes, node + 2, 2) << 16) * pageSize
        }
        let count = (Int(load(bytes, page + 12, 2)) - 16) / 2
        for index in 0..<count {
            let node = page + Int(load(bytes, page + 16 + 2 * index, 2))
            guard load(bytes, node + 4, 2) & 1 != 0 else { continue }  // F_BIGDATA
            edit(&bytes, node, node + 8 + Int(load(bytes, node + 6, 2)))
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    /// Raises the transaction id of the older meta page above the newer
    /// one's (byte 1 XORed, as the corruption suite's seed 381373302948
    /// did): LMDB then opens the older commit.
    static func raiseOlderMetaPage(_ path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let pageSize = Int(load(bytes, 16 + 24, 4))
        func txnid(_ page: Int) -> UInt64 { load(bytes, page * pageSize + 16 + 128, 8) }
        let older = txnid(0) < txnid(1) ? 0 : 1
        let newest = max(txnid(0), txnid(1))
        bytes[older * pageSize + 16 + 128 + 1] ^= 0x1D
        guard txnid(older) > newest else { throw CocoaError(.fileReadCorruptFile) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Overwrites the header of the `chunks` root page.
    static func scribbleOnRootOfChunks(_ path: String) throws {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (pageSize, root, _) = try chunksRoot(bytes)
        for index in 0..<16 { bytes[root * pageSize + index] = 0xA5 }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

/// The cost of the walk that follows an unclean session, on a store of
/// `WALK_COST_ENTRIES` small entries plus one 1 MiB entry per 100 of them
/// (skipped unless the variable is set; Recovery.md names it).
@Suite struct WalkCostTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["WALK_COST_ENTRIES"] != nil))
    func walkCost() throws {
        let count = Int(ProcessInfo.processInfo.environment["WALK_COST_ENTRIES"] ?? "") ?? 10_000
        let directory = temporaryPath("walk-cost")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try TestStore.open(directory: directory, configuration: StoreConfiguration(initialMapSize: 1 << 30))
        var generator = SplitMix64(seed: 3)
        let large = generator.bytes(1 << 20)
        var done = 0
        while done < count {
            try store.performBatch { batch in
                for index in done..<min(count, done + 1000) {
                    var value = generator.bytes(2000)
                    value[0] = UInt8(truncatingIfNeeded: index)
                    try batch.put(value, forKey: "small-\(index)")
                    if index % 100 == 0 {
                        var big = large
                        big[0] = UInt8(truncatingIfNeeded: index)
                        big[1] = UInt8(truncatingIfNeeded: index >> 8)
                        try batch.put(big, forKey: "large-\(index)")
                    }
                }
            }
            done += 1000
        }
        let statistics = try store.statistics()
        store.close()
        let path = directory.appendingPathComponent("data.mdb").path
        var times: [Double] = []
        for _ in 0..<3 {
            let start = Date()
            #expect(StoreFileCheck.damage(path: path) == nil)
            times.append(Date().timeIntervalSince(start))
        }
        print(
            "walk cost: \(statistics.entryCount) entries, \(statistics.chunkCount) chunks, "
                + "\(statistics.fileBytes >> 20) MiB file: walk \(times.map { String(format: "%.1f ms", $0 * 1000) })")
    }
}
