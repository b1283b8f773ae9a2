import Foundation
import LoopbackNginx
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The child processes the server tests and nginx run as: they inherit no
/// descriptor of the test process (Foundation's `Process` leaks, into a
/// child, descriptors other threads open while it starts; a long-lived
/// nginx holding another `Process`'s pipe or socket pair hung the suite).
@Suite("ChildProcess", .timeLimit(.minutes(1)))
struct ChildProcessTests {
    /// The descriptors open in process `pid`.
    static func descriptors(of pid: Int32) throws -> Set<Int32> {
        Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { Int32($0) })
    }

    @Test func inheritsNothingButItsStandardStreams() async throws {
        // A pipe without close-on-exec, as another `Process` makes while this child starts.
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let child = try ChildProcess("sleep", ["30"])
        // The child opens files of its own while it starts (`sleep` reads
        // /etc/locale.alias); an inherited descriptor stays open for good.
        var inherited = try Self.descriptors(of: child.processIdentifier)
        let deadline = Date().addingTimeInterval(5)
        while inherited != [0, 1, 2] && Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
            inherited = try Self.descriptors(of: child.processIdentifier)
        }
        #expect(
            inherited == [0, 1, 2],
            "\(inherited): \((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(child.processIdentifier)/fd").map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child.processIdentifier)/fd/\($0)")) ?? "?" }) ?? [])"
        )
        // The write end is only ours: closing it ends the pipe for its reader at once.
        close(ends[1])
        ends[1] = -1
        var byte: UInt8 = 0
        #expect(read(ends[0], &byte, 1) == 0)
        child.kill(SIGKILL)
        await child.exit()
        #expect(child.endedBySignal == true && child.terminationStatus == SIGKILL)
    }

    @Test func writesItsOutputToFilesAndReportsItsExitCode() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("out").path
        let errors = directory.appendingPathComponent("err").path
        let child = try ChildProcess(
            "/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], standardOutput: output, standardError: errors)
        await child.exit()
        #expect(child.terminationStatus == 3 && child.endedBySignal == false)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "out\n")
        #expect(try String(contentsOfFile: errors, encoding: .utf8) == "err\n")
        #expect(!child.isRunning)
    }

    @Test func readsItsInputFromAFileAndGetsTheEnvironmentItIsGiven() async throws {
        let directory = try TemporaryDirectory("child-input")
        defer { directory.remove() }
        let input = directory.path("in")
        let output = directory.path("out")
        try Data("line one\nline two\n".utf8).write(to: URL(fileURLWithPath: input))
        let child = try ChildProcess(
            "/bin/sh", ["-c", "wc -l; echo \"$GREETING/${HOME-unset}\""], environment: ["GREETING": "hello"],
            standardInput: input, standardOutput: output)
        await child.exit()
        #expect(child.terminationStatus == 0)
        // Exactly the environment given: nothing of this process's (HOME) leaks in.
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "2\nhello/unset\n")
    }

    @Test func inheritsThisProcesssEnvironmentWhenGivenNone() async throws {
        let directory = try TemporaryDirectory("child-environment")
        defer { directory.remove() }
        let output = directory.path("out")
        let child = try ChildProcess("/bin/sh", ["-c", "echo \"$PATH\""], standardOutput: output)
        await child.exit()
        let path = try #require(ProcessInfo.processInfo.environment["PATH"])
        #expect(try String(contentsOfFile: output, encoding: .utf8) == path + "\n")
    }

    @Test func sharesOneFileBetweenOutputAndErrorsInTheOrderWritten() async throws {
        let directory = try TemporaryDirectory("child-combined")
        defer { directory.remove() }
        let both = directory.path("both")
        let child = try ChildProcess(
            "/bin/sh", ["-c", "echo one; echo two >&2; echo three"], standardOutput: both, standardError: both)
        await child.exit()
        #expect(try String(contentsOfFile: both, encoding: .utf8) == "one\ntwo\nthree\n")
    }

    @Test func cancelledWaitKillsTheChild() async throws {
        let child = try ChildProcess("sleep", ["30"])
        let waiter = Task { await child.exit() }
        try await Task.sleep(for: .milliseconds(50))
        let started = ContinuousClock.now
        waiter.cancel()
        await waiter.value
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(child.endedBySignal == true && child.terminationStatus == SIGKILL)
    }

    /// Regression test for a crash of the whole test process: Foundation's
    /// `Process.run()` on Linux lists /proc/self/fd copying each entry as
    /// a whole 256-byte `dirent`, which reads past the end of glibc's
    /// 32 KiB `readdir` buffer once more than about 1,350 descriptors are
    /// open (SIGSEGV in `memcpy` when the next page is unmapped; fixed in
    /// swift-corelibs-foundation 81eb85a2a, after the 6.3 toolchain).
    /// The tests reach 1,400 descriptors with ~150 stores open at once. A
    /// `ChildProcess` lists nothing: with 2,000 more descriptors open,
    /// children started at once all run and their output reads back.
    @Test func startsChildrenWhileThisProcessHoldsThousandsOfDescriptors() async throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 8_192 {
            limit.rlim_cur = min(8_192, limit.rlim_max)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        try #require(null >= 0)
        var extra: [Int32] = [null]
        defer { for descriptor in extra { close(descriptor) } }
        for _ in 0..<2_000 {
            let descriptor = fcntl(null, F_DUPFD_CLOEXEC, 0)
            try #require(descriptor >= 0, "dup: errno \(errno)")
            extra.append(descriptor)
        }
        #expect(try Self.descriptors(of: getpid()).count > 2_000)
        let directory = try TemporaryDirectory("child-many-descriptors")
        defer { directory.remove() }
        // Started from eight tasks at once, as tests in flight start theirs.
        let outputs = try await withThrowingTaskGroup(of: (Int, Int32?, String).self) { group in
            for index in 0..<8 {
                group.addTask {
                    let output = directory.path("\(index)")
                    let child = try ChildProcess(
                        "/bin/sh", ["-c", "echo child $0", String(index)], standardOutput: output)
                    await child.exit()
                    return (index, child.terminationStatus, ChildOutput.text(output))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = ($1.1, $1.2) }
        }
        #expect(outputs.count == 8)
        for (index, (status, text)) in outputs {
            #expect(status == 0 && text == "child \(index)\n", "child \(index): \(status ?? -1) \(text)")
        }
    }

    @Test func missingExecutableThrows() {
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess("/nonexistent/tool-\(UUID())", []) }
    }
}
