import Foundation
import LoopbackNginx
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

    @Test func missingExecutableThrows() {
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess("/nonexistent/tool-\(UUID())", []) }
    }
}
