import Foundation
import LoopbackNginx
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 2, point 10: after SIGKILL at any moment, the reopened store
/// shows every entry whole or absent, nothing acknowledged is lost, and
/// reference counts and counters stay exact.
///
/// Each round starts `crash-writer` (Tests/CrashWriter) on the same store
/// with a new seed, kills it with SIGKILL after a random 20–300 ms, and
/// runs `crash-writer check`, which holds the checking logic (shared with
/// `Tools/crash-loop`, which runs many more rounds). `CRASH_ROUNDS` and
/// `CRASH_SEED` override the round count and the master seed.
@Suite struct CrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let rounds = environment["CRASH_ROUNDS"].flatMap { Int($0) } ?? 30

    @Test func sigkillAtRandomPointsLosesNothingAcknowledged() throws {
        let writer = try #require(
            CrashWriterBinary.locate(),
            """
            crash-writer is not built next to the test binary (\(CrashWriterBinary.searched.map(\.path))); \
            `swift build` (or `swift build --product crash-writer`) with the same --scratch-path builds it
            """)
        let master = Self.environment["CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(1) << 48)
        var generator = SplitMix64(seed: master)
        let directory = temporaryPath("crash")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let store = directory.appendingPathComponent("store")
        let log = directory.appendingPathComponent("ack.log")
        let errors = directory.appendingPathComponent("writer.err")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        var keep = false
        defer {
            if keep {
                print("crash test: master seed \(master); store and log kept in \(directory.path)")
            } else {
                try? FileManager.default.removeItem(at: directory)
            }
        }

        var acknowledged = 0
        var killedInFlight = 0
        for round in 1...Self.rounds {
            let seed = generator.next() >> 1
            let delay = 20 + Int(generator.next() % 281)
            let context =
                "round \(round), seed \(seed), killed after \(delay) ms (master seed \(master), CRASH_SEED=\(master) repeats the seeds)"

            let child = try ChildProcess(writer.path, [store.path, String(seed), log.path], standardError: errors.path)
            usleep(UInt32(delay * 1000))
            child.kill(SIGKILL)
            child.waitUntilExit()
            guard child.endedBySignal == true && child.terminationStatus == SIGKILL else {
                keep = true
                let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                Issue.record(
                    "the writer ended by itself (status \(child.terminationStatus ?? -1)) before the kill, \(context):\n\(stderr.suffix(3000))"
                )
                return
            }

            let (status, output) = try Self.run(writer, ["check", store.path, log.path])
            guard status == 0 else {
                keep = true
                Issue.record("crash check failed, \(context):\n\(output)")
                return
            }
            acknowledged += Self.field("acknowledged", in: output).flatMap { Int($0) } ?? 0
            if Self.field("pending", in: output)?.first?.isUppercase == true { killedInFlight += 1 }
        }

        // The store reopens in this process too, verifies clean, and its
        // counters agree with its entries.
        let reopened = try MediaStore(
            directory: store,
            configuration: StoreConfiguration(
                sizeLimit: 8 << 20, chunkSize: 16 << 10, inlineLimit: 1024, initialMapSize: 64 << 20))
        let report = try reopened.verify()
        #expect(report.isClean, "master seed \(master): \(report.problems.joined(separator: "\n"))")
        let statistics = try reopened.statistics()
        let entries = try reopened.entries()
        #expect(statistics.entryCount == entries.count)
        #expect(statistics.completeCount == entries.filter(\.isComplete).count)
        #expect(statistics.logicalBytes == entries.reduce(0) { $0 + $1.cachedBytes })
        #expect(acknowledged > 0, "the writer never got to write in \(Self.rounds) rounds")
        if !report.isClean { keep = true }
        print(
            "crash test: \(Self.rounds) rounds, \(acknowledged) operations acknowledged, "
                + "\(killedInFlight) kills with a write in flight, master seed \(master)")
    }

    /// Group commits keep "stored" meaning stored: `crash-writer group`
    /// puts from six threads at once (their writes share commits) and logs
    /// each key once its put returned (one in ten streamed and published
    /// with its hold in the same commit, `EntryWriter.finish(with:)`);
    /// killed at a random point, every logged key is in the reopened store
    /// with exactly its bytes, every entry there (logged or not) reads back
    /// exactly the bytes its key names, one published with its hold is
    /// held, and the store verifies clean. Each round adds to the same store and log and
    /// kills the writer 20–300 ms after its first acknowledgement.
    @Test func sigkillDuringGroupCommitsLosesNoAcknowledgedPut() throws {
        let writer = try #require(CrashWriterBinary.locate(), "crash-writer is not built next to the test binary")
        let master = Self.environment["CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(1) << 48)
        var generator = SplitMix64(seed: master)
        let directory = temporaryPath("group-crash")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = directory.appendingPathComponent("store")
        let log = directory.appendingPathComponent("ack.log")
        var acknowledged = 0
        for round in 1...max(1, Self.rounds / 3) {
            let seed = generator.next() >> 1
            let delay = 20 + Int(generator.next() % 281)
            let context = "round \(round), seed \(seed), killed after \(delay) ms (CRASH_SEED=\(master))"
            let loggedBefore = Self.lineCount(log)
            let child = try ChildProcess(writer.path, ["group", store.path, String(seed), log.path])
            // Killed a random while after its first acknowledged put (a
            // loaded machine can take longer than the delay to start it).
            let deadline = Date().addingTimeInterval(30)
            while Self.lineCount(log) == loggedBefore && child.isRunning && Date() < deadline { usleep(2000) }
            usleep(UInt32(delay * 1000))
            child.kill(SIGKILL)
            child.waitUntilExit()
            try #require(
                child.endedBySignal == true && child.terminationStatus == SIGKILL,
                "the group writer ended by itself (status \(child.terminationStatus ?? -1)), \(context)")
            let (status, output) = try Self.run(writer, ["group-check", store.path, log.path])
            try #require(status == 0, "group check failed, \(context):\n\(output)")
            acknowledged = output.split(separator: " ").dropFirst(2).first.flatMap { Int($0) } ?? acknowledged
        }
        #expect(acknowledged > 0, "the group writer never acknowledged a put")
        print("group crash test: \(acknowledged) puts acknowledged in all, master seed \(master)")
    }

    /// A crash during the very first open can leave what LMDB creates
    /// before it writes anything: its lock file alone (`data.mdb-lock`
    /// comes first), or that and a still empty `data.mdb`. Opening again
    /// must carry on from there rather than call the directory foreign.
    @Test(arguments: [["data.mdb-lock"], ["data.mdb-lock", "data.mdb"], ["data.mdb"]])
    func firstOpenKilledBeforeLMDBWroteAnything(leftBehind: [String]) throws {
        let directory = temporaryPath("first-open")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for name in leftBehind {
            #expect(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: nil))
        }
        let store = try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        try store.put(Array("after the crash".utf8), forKey: "k")
        #expect(try store.data(forKey: "k") == Data("after the crash".utf8))
        #expect(try store.verify().isClean)
    }

    /// Lines in the file at `url` (0 when it is missing).
    static func lineCount(_ url: URL) -> Int {
        ((try? Data(contentsOf: url)) ?? Data()).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// The value of `name=value` in a check's output line.
    static func field(_ name: String, in output: String) -> String? {
        output.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix(name + "=") }
            .map { String($0.dropFirst(name.count + 1)) }
    }

    /// Runs `executable` and returns its exit status and combined output.
    static func run(_ executable: URL, _ arguments: [String]) throws -> (Int32, String) {
        let output = temporaryPath("crash-check-output")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(
            executable.path, arguments, standardOutput: output.path, standardError: output.path)
        child.waitUntilExit()
        return (child.terminationStatus ?? -1, ChildOutput.text(output.path))
    }
}

/// Finds the `crash-writer` executable built beside the tests (or with
/// `--scratch-path .build-crash`).
enum CrashWriterBinary {
    static let scratchPaths = [".build-crash", ".build"]

    /// Where it is looked for, in order.
    static var searched: [URL] { BuiltProduct.candidates("crash-writer", scratchPaths: scratchPaths) }

    static func locate() -> URL? { BuiltProduct.locate("crash-writer", scratchPaths: scratchPaths) }
}
