import Foundation
import LoopbackNginx

/// Runs a command-line tool found on PATH and returns its exit status and
/// standard output. The tool is a ``ChildProcess`` (Foundation's `Process`
/// lists /proc/self/fd as it starts, which crashed this process when it
/// held many descriptors) and its output goes through a temporary file
/// rather than a pipe.
func runTool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).out")
    defer { try? FileManager.default.removeItem(at: file) }
    let child = try ChildProcess("/usr/bin/env", arguments, standardOutput: file.path)
    child.waitUntilExit()
    return (child.terminationStatus ?? -1, String(decoding: try Data(contentsOf: file), as: UTF8.self))
}
