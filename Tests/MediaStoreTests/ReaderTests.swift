import Foundation
import LoopbackNginx
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Point 11 (readers): a read-only open, readers in other processes while
/// this one writes, and stale reader slots of dead processes.
///
/// LMDB forbids opening one environment twice in a process (closing the
/// second copy drops the first one's locks), so the read-only store is
/// opened only after the writer is closed, and the concurrent second
/// process is LMDB's own `mdb_stat` / `mdb_dump` (package lmdb-utils).
@Suite struct ReaderTests {
    static let tools = ["/usr/bin/mdb_stat", "/usr/bin/mdb_dump"]
    static let haveTools = ExternalTool.available("mdb_stat", "mdb_dump")

    let directory = temporaryPath("readers")
    var dataFile: String { directory.appendingPathComponent("data.mdb").path }

    @Test func aReadOnlyStoreReadsEverythingAndWritesNothing() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 111)
        let big = generator.bulkBytes(600_000)
        let chunk = 65_536
        do {
            let store = try MediaStore(
                directory: directory, configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 64 << 20))
            try store.put(
                [1, 2, 3], forKey: "small", options: WriteOptions(metadata: EntryMetadata(mimeType: "text/plain")))
            try store.put(big, forKey: "big")
            let version = try store.prepareEntry(forKey: "partial", length: 3 * chunk).version
            try store.write(big[..<chunk], at: chunk, forKey: "partial", version: version)
            try store.put([9], forKey: "expired", options: WriteOptions(expiry: .after(-1)))
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: dataFile))

        let store = try MediaStore.openReadOnly(directory: directory)
        #expect(store.isReadOnly)
        #expect(try store.data(forKey: "small") == Data([1, 2, 3]))
        #expect(try store.info(forKey: "small")?.metadata.mimeType == "text/plain")
        #expect(try store.data(forKey: "big") == Data(big))
        #expect(try store.read(forKey: "big", range: 70_000..<200_000) == Data(big[70_000..<200_000]))
        #expect(try store.cachedRanges(forKey: "partial") == [chunk..<2 * chunk])
        #expect(try store.data(forKey: "expired") == nil)
        #expect(try store.contains("big"))
        #expect(try store.entries().count == 4)
        #expect(try store.statistics().entryCount == 4)
        #expect(try store.verify().isClean)
        try store.flushAccessTimes()  // nothing to do, no error

        let version = try #require(try store.info(forKey: "partial")?.version)
        let refusals: [(String, () throws -> Void)] = [
            ("put", { try store.put([1], forKey: "new") }),
            ("remove", { try store.remove(forKey: "big") }),
            ("removeAll", { try store.removeAll() }),
            ("prepareEntry", { try store.prepareEntry(forKey: "new", length: 10) }),
            ("write", { try store.write(big[..<chunk], at: 0, forKey: "partial", version: version) }),
            ("setPinned", { try store.setPinned(true, forKey: "big") }),
            ("setMetadata", { try store.setMetadata(EntryMetadata(), forKey: "big") }),
            ("setExpiry", { try store.setExpiry(.never, forKey: "big") }),
            ("removeExpired", { try store.removeExpired() }),
            ("evict", { try store.evict(toBytes: 0) }),
            ("makeWriter", { _ = try store.makeWriter(forKey: "new") }),
            ("performBatch", { try store.performBatch { try $0.put([1], forKey: "new") } }),
        ]
        for (name, body) in refusals {
            #expect(throws: StoreError.readOnly, "\(name)") { try body() }
        }
        #expect(try store.statistics().entryCount == 4)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dataFile)) == before)
    }

    @Test(.enabled(if: haveTools, "needs mdb_stat and mdb_dump (lmdb-utils)"))
    func anotherProcessReadsWhileThisOneWrites() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        for index in 0..<20 { try store.put([UInt8(index)], forKey: "k\(index)") }

        // mdb_stat in another process sees every committed entry.
        let stat = try runTool("/usr/bin/mdb_stat", ["-n", "-s", "keys", dataFile])
        #expect(stat.contains("Entries: 20"), "\(stat)")

        // And the format record, byte for byte.
        let dump = try runTool("/usr/bin/mdb_dump", ["-n", "-s", "meta", dataFile])
        let hex = StoreFormat.encoded().map { String(format: "%02x", $0) }.joined()
        #expect(dump.contains(hex), "\(dump)")

        // This process keeps writing after the other one read.
        try store.put([1], forKey: "after")
        let again = try runTool("/usr/bin/mdb_stat", ["-n", "-s", "keys", dataFile])
        #expect(again.contains("Entries: 21"), "\(again)")
        #expect(try store.verify().isClean)
    }

    /// A reader killed mid-read leaves its slot behind; opening the store
    /// clears it (`mdb_reader_check`), so it does not pin old pages.
    ///
    /// LMDB wipes the whole reader table when the first process opens the
    /// environment, so a second, live reader keeps it open throughout:
    /// only then does the stale slot survive until the store's own check.
    @Test(.enabled(if: haveTools, "needs mdb_stat and mdb_dump (lmdb-utils)"))
    func staleReaderSlotsAreClearedAtOpen() throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        var generator = SplitMix64(seed: 112)
        do {
            let store = try MediaStore(
                directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
            try store.put(generator.bulkBytes(1_000_000), forKey: "big")
        }
        let live = try startBlockedReader()
        defer {
            live.process.kill(SIGKILL)
            live.process.waitUntilExit()
            close(live.fifo)
        }
        let doomed = try startBlockedReader()
        let pid = doomed.process.processIdentifier
        doomed.process.kill(SIGKILL)
        doomed.process.waitUntilExit()
        close(doomed.fifo)
        #expect(try readerPIDs().contains(pid))  // the slot outlives its process

        let store = try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        let readers = try readerPIDs()
        #expect(!readers.contains(pid))
        #expect(readers.contains(live.process.processIdentifier))
        #expect(try store.data(forKey: "big")?.count == 1_000_000)
    }

    /// Starts `mdb_dump` on the store with nobody reading its output (a
    /// FIFO whose read end this process holds, `fifo`, and never reads):
    /// it blocks on the full pipe in the middle of its read transaction.
    /// Returns once its reader slot is listed; the caller kills it, then
    /// closes `fifo`.
    func startBlockedReader() throws -> (process: ChildProcess, fifo: Int32) {
        let path = temporaryPath("blocked-reader").path
        guard mkfifo(path, 0o600) == 0 else { throw ToolFailure(message: "mkfifo \(path): errno \(errno)") }
        defer { unlink(path) }
        // Open first, without waiting for a writer, so that the child's own
        // open for writing finds a reader and does not wait either.
        let fifo = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fifo >= 0 else { throw ToolFailure(message: "open \(path): errno \(errno)") }
        let process: ChildProcess
        do {
            process = try ChildProcess("/usr/bin/mdb_dump", ["-n", "-s", "chunks", dataFile], standardOutput: path)
        } catch {
            close(fifo)
            throw error
        }
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if try readerPIDs().contains(process.processIdentifier) { return (process, fifo) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        process.kill(SIGKILL)
        process.waitUntilExit()
        close(fifo)
        throw ToolFailure(message: "mdb_dump never showed up as a reader")
    }

    /// The process ids in the environment's reader table, per `mdb_stat -r`.
    func readerPIDs() throws -> [Int32] {
        // mdb_stat exits with 1 after printing the reader table alone.
        let output = try runTool("/usr/bin/mdb_stat", ["-n", "-r", dataFile], anyStatus: true)
        #expect(output.contains("Reader Table Status"))
        // Lines after the "pid thread txnid" header: "  1234 7f.. 56".
        return output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return pid
        }
    }
}
