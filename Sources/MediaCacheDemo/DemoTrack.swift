import Foundation

/// The track the demo serves: a 90-second MP3 made with ffmpeg, or the
/// 4-second test fixture when ffmpeg is missing.
enum DemoTrack {
    static func make(in directory: URL) throws -> URL {
        let track = directory.appendingPathComponent("track.mp3")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i",
            "sine=frequency=440:duration=90:sample_rate=44100", "-c:a", "libmp3lame", "-b:a", "128k",
            "-fflags", "+bitexact", "-map_metadata", "-1", track.path,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        if (try? process.run()) != nil {
            process.waitUntilExit()
            if process.terminationStatus == 0 { return track }
        }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tests/MediaStreamingTests/Fixtures/track.mp3")
        try FileManager.default.copyItem(at: fixture, to: track)
        return track
    }
}
