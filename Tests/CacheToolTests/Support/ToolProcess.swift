import Foundation
import LoopbackNginx
@_exported import TestSupport

/// Runs the built executables of the package (cachetool, crash-writer)
/// as child processes, the way a user or script does.
enum ToolProcess {
    /// The result of one run.
    struct Result {
        var status: Int32
        /// Whether it ended by a signal (`status` is then the signal).
        var signaled: Bool
        var output: Data
        var errors: String

        var text: String { String(decoding: output, as: UTF8.self) }

        /// The output parsed as a JSON object.
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: output) as? [String: Any] }
    }

    /// Where executables of this build are: beside the test bundle.
    static var binDirectory: URL? {
        BuiltProduct.locate("cachetool", scratchPaths: [".build-tool"])?.deletingLastPathComponent()
    }

    static func executable(_ name: String) throws -> URL {
        guard let directory = binDirectory else {
            throw ToolTestError(
                "cachetool is not built beside the tests; `swift build --scratch-path .build-tool` builds it")
        }
        let url = directory.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw ToolTestError("\(name) is not built in \(directory.path)")
        }
        return url
    }

    /// Runs `cachetool arguments…` with `input` on standard input.
    @discardableResult
    static func cachetool(_ arguments: [String], input: Data? = nil, environment: [String: String] = [:])
        async throws -> Result
    {
        try await run(executable("cachetool"), arguments, input: input, environment: environment)
    }

    /// Runs `executable` to its end as a ``ChildProcess``: its input, output
    /// and errors are files of a scratch directory, and its end is awaited
    /// without holding a thread (no pipe to drain, no reader thread).
    static func run(
        _ executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> Result {
        let scratch = try TemporaryDirectory("tool-run")
        defer { scratch.remove() }
        var merged = ProcessInfo.processInfo.environment
        merged["MEDIACACHE_STORE"] = nil
        for (key, value) in environment { merged[key] = value }
        let inputPath = scratch.path("input")
        if let input { try input.write(to: URL(fileURLWithPath: inputPath)) }
        let child = try ChildProcess(
            executable.path, arguments, environment: merged, standardInput: input == nil ? nil : inputPath,
            standardOutput: scratch.path("output"), standardError: scratch.path("errors"))
        await child.exit()
        return Result(
            status: child.terminationStatus ?? -1, signaled: child.endedBySignal ?? false,
            output: (try? Data(contentsOf: URL(fileURLWithPath: scratch.path("output")))) ?? Data(),
            errors: ChildOutput.text(scratch.path("errors")))
    }
}

struct ToolTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
