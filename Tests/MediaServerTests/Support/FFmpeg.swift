import Foundation
import LoopbackNginx

/// Runs the real `ffprobe`/`ffmpeg` (installed by Tools/bootstrap).
enum FFmpeg {
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `tool` as a ``ChildProcess`` (it inherits no descriptor of the
    /// test process, and its end is awaited without blocking a thread).
    static func run(_ tool: String, _ arguments: [String]) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("ffmpeg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outputFile = scratch.appendingPathComponent("output")
        let errorFile = scratch.appendingPathComponent("errors")
        let process = try ChildProcess(
            tool, (tool == "ffmpeg" ? ["-nostdin"] : []) + arguments, standardOutput: outputFile.path,
            standardError: errorFile.path)
        await process.exit()
        return Outcome(
            status: process.terminationStatus ?? -1,
            output: String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self),
            errors: String(decoding: (try? Data(contentsOf: errorFile)) ?? Data(), as: UTF8.self))
    }

    /// The container duration ffprobe reports for `input` (a file path or URL).
    static func duration(_ input: String) async throws -> Double? {
        let outcome = try await run(
            "ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", input])
        return outcome.status == 0 ? Double(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines)) : nil
    }

    /// Decodes `input` entirely (`-f null -`); returns the decoded duration
    /// in seconds from ffmpeg's last progress line, or `nil` when decoding failed.
    static func decode(_ input: String, extra: [String] = []) async throws -> Double? {
        let outcome = try await run("ffmpeg", ["-v", "error", "-stats"] + extra + ["-i", input, "-f", "null", "-"])
        guard outcome.status == 0, !outcome.errors.contains("rror") else { return nil }
        // "size=N/A time=00:00:04.04 bitrate=N/A speed=..."
        guard let time = outcome.errors.components(separatedBy: "time=").last?.split(separator: " ").first else {
            return nil
        }
        let parts = time.split(separator: ":").compactMap { Double($0) }
        guard parts.count == 3 else { return nil }
        return parts[0] * 3600 + parts[1] * 60 + parts[2]
    }
}
