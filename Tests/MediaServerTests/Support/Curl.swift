import Foundation
import LoopbackNginx

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

    /// Runs curl as a ``ChildProcess`` (it inherits no descriptor of the
    /// test process, and its end is awaited without blocking a thread).
    static func run(_ arguments: [String], timeout: Double = 30) async throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let headerFile = scratch.appendingPathComponent("headers")
        let bodyFile = scratch.appendingPathComponent("body")
        let logFile = scratch.appendingPathComponent("log")
        let process = try ChildProcess(
            "curl",
            ["-sS", "-v", "--max-time", String(Int(timeout)), "-D", headerFile.path, "-o", bodyFile.path] + arguments,
            standardError: logFile.path)
        await process.exit()
        let log = String(decoding: (try? Data(contentsOf: logFile)) ?? Data(), as: UTF8.self)
        let headerText = String(decoding: (try? Data(contentsOf: headerFile)) ?? Data(), as: UTF8.self)
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
        return Result(
            exitStatus: process.terminationStatus ?? -1, status: status, headers: headers, body: body, log: log)
    }
}
