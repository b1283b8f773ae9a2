import Foundation

/// Runs a command-line tool found on PATH and returns its exit status and
/// standard output. The output goes through a temporary file rather than a
/// pipe: Foundation's `readDataToEndOfFile()` traps when a read is
/// interrupted by a signal (EINTR), which happens on a loaded machine.
func runTool(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("tool-\(UUID().uuidString).out")
    _ = FileManager.default.createFile(atPath: file.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: file) }
    let handle = try FileHandle(forWritingTo: file)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardOutput = handle
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    try handle.close()
    return (process.terminationStatus, String(decoding: try Data(contentsOf: file), as: UTF8.self))
}
