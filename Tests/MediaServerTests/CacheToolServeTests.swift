import Foundation
import LoopbackNginx
import TestSupport
import Testing

/// `cachetool serve` as a user runs it: prints the local URL, serves it
/// through the store, exits when idle.
@Suite("cachetool serve", .serialized, .timeLimit(.minutes(3)))
struct CacheToolServeTests {
    static var cachetool: URL? { BuiltProduct.locate("cachetool") }

    @Test func printsPlayableURLs() async throws {
        let fixture = try ServerFixture()
        let cachetool = try #require(Self.cachetool, "cachetool is built with the tests")
        let store = fixture.directory.appendingPathComponent("served-store")
        let process = Process()
        process.executableURL = cachetool
        process.arguments = [
            "serve", "--store", store.path, "--print-url", fixture.originURL("track.mp3").absoluteString, "--print-url",
            fixture.originURL("track.flac").absoluteString,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let lines = try await offPool { () -> [String] in
            var text = ""
            while text.split(separator: "\n").count < 2 {
                let data = output.fileHandleForReading.availableBytes()
                if data.isEmpty { break }
                text += String(decoding: data, as: UTF8.self)
            }
            return text.split(separator: "\n").map(String.init)
        }
        #expect(lines.count == 2)
        let local = try #require(lines.first)
        #expect(local.hasPrefix("http://127.0.0.1:") && local.hasSuffix("/track.mp3"))
        let result = try await Curl.run([local])
        let original = try ServerFixture.fixture("track.mp3")
        #expect(result.status == 200 && result.body == original)
        let duration = try await FFmpeg.duration(lines[1])
        #expect(duration == 4.0)
        // The bytes stay in the store it serves.
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("data.mdb").path))
        process.terminate()
        try await offPool { process.waitUntilExit() }
        #expect(process.terminationReason == .uncaughtSignal)
    }

    @Test func exitsWhenIdle() async throws {
        let cachetool = try #require(Self.cachetool)
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("serve-idle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let process = Process()
        process.executableURL = cachetool
        process.arguments = ["serve", "--store", store.path, "--idle-exit", "0.5"]
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let log = try await offPool {
            String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        }
        try await offPool { process.waitUntilExit() }
        #expect(process.terminationStatus == 0)
        #expect(log.contains("serving") && log.contains("port"))
    }

    @Test func refusesBadArguments() async throws {
        let cachetool = try #require(Self.cachetool)
        for arguments in [["--port", "70000"], ["--print-url", "file:///etc/passwd"], ["--idle-exit", "-1"]] {
            let process = Process()
            process.executableURL = cachetool
            process.arguments =
                ["serve", "--store", FileManager.default.temporaryDirectory.path + "/unused-\(UUID())"] + arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            try await offPool { process.waitUntilExit() }
            #expect(process.terminationStatus == 2, "\(arguments)")
        }
    }
}
