import Foundation

/// The committed audio fixtures (made by Tools/make-fixtures).
enum Fixtures {
    static let names = ["track.mp3", "track.m4a", "track.aac", "track.flac", "track.ogg", "track.opus", "track.wav"]

    static var directory: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)
            ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures")
    }

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static func data(_ name: String) throws -> Data { try Data(contentsOf: url(name)) }
}

struct FixtureFailure: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Runs `ffprobe` on `bytes`; returns the decoded duration in seconds,
/// or throws when ffprobe cannot decode them.
func probeDuration(of bytes: Data, name: String) throws -> Double {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("probe-\(UUID().uuidString)-\(name)")
    try bytes.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let (status, text) = try runTool([
        "ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", file.path,
    ])
    guard status == 0, let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw FixtureFailure(message: "ffprobe cannot decode \(name): \(text)")
    }
    return seconds
}
