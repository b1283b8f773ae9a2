import Foundation

/// External programs some tests need (nginx, ffprobe, xxh128sum, the LMDB
/// utilities, prlimit). `Tools/bootstrap` installs them, and `Tools/test`
/// (the CI command) sets `MEDIACACHE_REQUIRE_TOOLS=1`: there a test that
/// needs a missing tool runs and fails instead of being skipped.
public enum ExternalTool {
    /// Whether tests must run even when a tool is missing (CI).
    public static var isRequired: Bool {
        let environment = ProcessInfo.processInfo.environment
        return environment["MEDIACACHE_REQUIRE_TOOLS"] == "1" || environment["CI"] != nil
    }

    /// The first of `paths`, then of `PATH`'s directories holding `name`, that is executable.
    public static func find(_ name: String, paths: [String] = []) -> String? {
        let searched = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":").map { "\($0)/\(name)" } ?? []
        return (paths + searched).first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// For `.enabled(if:)`: the tools are installed, or tests must run anyway.
    public static func available(_ names: String...) -> Bool {
        isRequired || names.allSatisfy { find($0, paths: ["/usr/bin/\($0)", "/usr/sbin/\($0)"]) != nil }
    }
}
