import Foundation

/// An executable of this package that a test runs as a child
/// (`crash-writer`, `queue-app`, `cachetool`), built beside the tests.
public enum BuiltProduct {
    /// Where `name` is looked for, in order: next to the test binary (or
    /// the .xctest bundle), then in `debug` of each of `scratchPaths`
    /// (folders under the package root).
    public static func candidates(_ name: String, scratchPaths: [String] = [".build"]) -> [URL] {
        var directories: [URL] = []
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for scratch in scratchPaths {
            directories.append(root.appendingPathComponent(scratch).appendingPathComponent("debug"))
        }
        return directories.map { $0.appendingPathComponent(name) }
    }

    /// The first of ``candidates(_:scratchPaths:)`` that is executable.
    public static func locate(_ name: String, scratchPaths: [String] = [".build"]) -> URL? {
        candidates(name, scratchPaths: scratchPaths).first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}
