import Foundation
@_exported import TestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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

    /// Runs `executable` to its end. The waiting (for its output and its
    /// exit) happens on a thread of its own: a test waiting on a thread of
    /// the concurrency pool (as many as cores) for a child's whole run
    /// would hold that thread from every other test meanwhile.
    static func run(
        _ executable: URL, _ arguments: [String], input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result {
                        try runWaiting(executable, arguments, input: input, environment: environment)
                    })
            }.start()
        }
    }

    private static func runWaiting(
        _ executable: URL, _ arguments: [String], input: Data?, environment: [String: String]
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged["MEDIACACHE_STORE"] = nil
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        if let input {
            // A child that exits before reading all of its input (a full
            // disk, a bad argument) must not kill the test process with
            // SIGPIPE; the write then fails with EPIPE and the child's own
            // exit status tells the story.
            signal(SIGPIPE, SIG_IGN)
            try? inputPipe.fileHandleForWriting.write(contentsOf: input)
            try? inputPipe.fileHandleForWriting.close()
        }
        // Read both pipes concurrently so that neither fills and blocks the child.
        let errorBox = ErrorBox()
        let reader = Thread {
            errorBox.data = errors.fileHandleForReading.readDataToEndOfFile()
            errorBox.done.signal()
        }
        reader.start()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        errorBox.done.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal, output: data,
            errors: String(decoding: errorBox.data, as: UTF8.self))
    }

    private final class ErrorBox: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }
}

struct ToolTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
