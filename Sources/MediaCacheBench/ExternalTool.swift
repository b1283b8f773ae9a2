import Foundation
import LoopbackNginx

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A command-line program the `network` group compares against or needs
/// (curl, aria2c, yt-dlp, ffmpeg, python3), found on `PATH`, run with a
/// time bound.
struct ExternalTool: Sendable {
    /// The name looked up (`curl`).
    let name: String
    /// Its full path.
    let path: String

    /// A tool that did not run to a clean end.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What one run did.
    struct Run: Sendable {
        /// Wall-clock seconds from the start of the process to its end.
        var seconds: Double
        /// Its standard output.
        var output: String
    }

    /// The tool `name` on `PATH` (searched in `path`), or `nil`.
    static func find(_ name: String, path: String? = ProcessInfo.processInfo.environment["PATH"]) -> ExternalTool? {
        for directory in (path ?? "").split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return ExternalTool(name: name, path: candidate)
            }
        }
        return nil
    }

    /// Where this Python installs the programs of `pip install --user`
    /// (`~/.local/bin` on Linux), which need not be on `PATH`:
    /// Tools/bootstrap installs yt-dlp there. Empty when it cannot tell.
    func userScripts(scratch: URL) -> [String] {
        let script =
            "import sysconfig as s; scheme = s.get_preferred_scheme('user') if hasattr(s, 'get_preferred_scheme')"
            + " else 'posix_user'; print(s.get_path('scripts', scheme))"
        guard let run = try? run(["-c", script], scratch: scratch, limit: 10) else { return [] }
        let directory = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        return directory.isEmpty ? [] : [directory]
    }

    /// Runs the tool with `arguments`, its output and errors in files of
    /// `scratch`, and waits for it, at most `limit` seconds: past that its
    /// process group is killed and ``Failure`` thrown. A non-zero exit
    /// throws ``Failure`` with the end of its error output.
    func run(_ arguments: [String], scratch: URL, limit: Double) throws -> Run {
        let output = scratch.appendingPathComponent("\(name)-\(UInt32.random(in: 0...UInt32.max)).out").path
        let errors = output + ".err"
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        let start = Stopwatch.now()
        let process: ChildProcess
        do {
            process = try ChildProcess(path, arguments, standardOutput: output, standardError: errors)
        } catch {
            throw Failure(description: "\(name): \(error.description)")
        }
        while process.isRunning {
            if BenchmarkRunner.seconds(since: start) > limit {
                // Its own process group (ChildProcess): children go too.
                _ = kill(-process.processIdentifier, SIGKILL)
                process.kill(SIGKILL)
                process.waitUntilExit()
                throw Failure(description: "\(name) took more than \(Int(limit)) s and was killed")
            }
            usleep(2_000)
        }
        let seconds = BenchmarkRunner.seconds(since: start)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0 else {
            let log = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw Failure(
                description:
                    "\(name) \(arguments.joined(separator: " ")) ended with status \(process.terminationStatus ?? -1): \(log.suffix(600))"
            )
        }
        return Run(seconds: seconds, output: text)
    }
}
