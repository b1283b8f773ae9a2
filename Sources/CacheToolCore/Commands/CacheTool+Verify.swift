import Foundation
import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `verify`: the walk runs in a child process (this executable again),
/// because LMDB's own pages carry no checksums and a damaged B-tree can
/// make LMDB fault. The parent turns a child killed by a signal into a
/// report (exit 3) instead of dying with it.
extension CacheTool {
    func verify(_ parsed: ParsedArguments) throws {
        if environment[Self.verifyChildVariable] == nil, let executable = executablePath {
            try verifyInChild(parsed, executable: executable)
        } else {
            try verifyHere(parsed)
        }
    }

    private func verifyInChild(_ parsed: ParsedArguments, executable: String) throws {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments =
            ["verify", "--store", storeDirectory(parsed).path] + (parsed.flag("json") ? ["--json"] : [])
            + (parsed.value("key-file").map { ["--key-file", $0] } ?? [])
        var childEnvironment = environment
        childEnvironment[Self.verifyChildVariable] = "1"
        child.environment = childEnvironment
        console.progress("verifying \(storeDirectory(parsed).path) ...")
        do {
            try child.run()
        } catch {
            throw ToolError("cannot start the verification process \(executable): \(error)")
        }
        child.waitUntilExit()
        console.endProgress()
        if child.terminationReason == .exit {
            // The child printed why.
            if child.terminationStatus != 0 { throw ToolError(status: child.terminationStatus, "") }
            return
        }
        let signal = child.terminationStatus
        let name = String(cString: strsignal(signal))
        let message =
            "the store file is damaged: reading it crashed the verification process (signal \(signal), \(name)); "
            + "LMDB's B-tree pages carry no checksums, so this damage can only be found this way"
        if parsed.flag("json") {
            printJSON(
                "verify",
                [
                    ("store", .string(storeDirectory(parsed).path)), ("clean", .bool(false)), ("crashed", .bool(true)),
                    ("signal", .int(Int(signal))), ("entries", .null), ("chunksRead", .null),
                    ("corruptKeys", .array([])), ("problems", .array([.string(message)])),
                ])
        }
        throw ToolError(status: 3, message)
    }

    private func verifyHere(_ parsed: ParsedArguments) throws {
        let directory = storeDirectory(parsed)
        let report: VerificationReport
        do {
            let store = try openStore(parsed)
            report = try store.verify()
        } catch let error as StoreError {
            // data.mdb exists but cannot be read as a store: that is damage.
            let damaged: Bool
            switch error {
            case .damagedStore, .corrupted: damaged = true
            case .notAStore, .storage:
                damaged = FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path)
            default: damaged = false
            }
            guard damaged else { throw error }
            let message = "the store file is damaged: \(error)"
            if parsed.flag("json") {
                printJSON(
                    "verify",
                    [
                        ("store", .string(directory.path)), ("clean", .bool(false)), ("crashed", .bool(false)),
                        ("signal", .null), ("entries", .null), ("chunksRead", .null),
                        ("corruptKeys", .array([])), ("problems", .array([.string(message)])),
                    ])
            }
            throw ToolError(status: 3, message)
        }
        if parsed.flag("json") {
            printJSON(
                "verify",
                [
                    ("store", .string(directory.path)), ("clean", .bool(report.isClean)), ("crashed", .bool(false)),
                    ("signal", .null), ("entries", .int(report.entries)), ("chunksRead", .int(report.chunksRead)),
                    ("corruptKeys", .array(report.corruptKeys.map(JSONValue.string))),
                    ("problems", .array(report.problems.map(JSONValue.string))),
                ])
        } else {
            for problem in report.problems { console.print("CORRUPT: \(Self.printable(problem))") }
            console.print(
                "\(report.isClean ? "ok" : "FAILED"): \(report.entries) entries, \(report.chunksRead) chunk references checked, "
                    + "\(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")")
        }
        if !report.isClean {
            let keys = report.corruptKeys.prefix(5).map { Self.printable(String($0.prefix(100))) }.joined(
                separator: ", ")
            throw ToolError(
                status: 3,
                "verify found \(report.problems.count) problem\(report.problems.count == 1 ? "" : "s")"
                    + (keys.isEmpty ? "" : " (corrupt: \(keys)\(report.corruptKeys.count > 5 ? ", ..." : ""))"))
        }
    }
}
