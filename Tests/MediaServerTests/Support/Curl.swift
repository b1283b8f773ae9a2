import Foundation

/// Runs the real `curl` (installed by Tools/bootstrap) and collects the
/// last response's status and headers, the body and the verbose log.
struct Curl {
    struct Result: Sendable {
        var exitStatus: Int32
        var status: Int
        /// Header names lowercased (the last response's).
        var headers: [String: String]
        var body: Data
        var log: String
    }

    /// Runs curl off the cooperative pool.
    static func run(_ arguments: [String], timeout: Double = 30) async throws -> Result {
        try await offPool { try runBlocking(arguments, timeout: timeout) }
    }

    static func runBlocking(_ arguments: [String], timeout: Double) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let headerFile = scratch.appendingPathComponent("headers")
        let bodyFile = scratch.appendingPathComponent("body")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "-sS", "-v", "--max-time", String(Int(timeout)), "-D", headerFile.path, "-o", bodyFile.path]
            + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let headerText = (try? String(contentsOf: headerFile, encoding: .utf8)) ?? ""
        // The last response's head (curl appends every one).
        let blocks = headerText.components(separatedBy: "\r\n\r\n").filter { !$0.isEmpty }
        var status = 0
        var headers: [String: String] = [:]
        if let last = blocks.last {
            let lines = last.components(separatedBy: "\r\n")
            status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        let body = (try? Data(contentsOf: bodyFile)) ?? Data()
        return Result(exitStatus: process.terminationStatus, status: status, headers: headers, body: body, log: log)
    }
}
