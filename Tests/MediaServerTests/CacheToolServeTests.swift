import Foundation
import LoopbackNginx
import MediaServer
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `cachetool serve` as a user runs it: prints the local URL, serves it
/// through the store, exits when idle.
@Suite("cachetool serve", .serialized, .timeLimit(.minutes(3)))
struct CacheToolServeTests {
    static var cachetool: URL? { BuiltProduct.locate("cachetool") }

    @Test func printsPlayableURLs() async throws {
        let fixture = try ServerFixture()
        let cachetool = try #require(Self.cachetool, "cachetool is built with the tests")
        let store = fixture.directory.appendingPathComponent("served-store")
        let output = fixture.directory.appendingPathComponent("serve.out").path
        let process = try ChildProcess(
            cachetool.path,
            [
                "serve", "--store", store.path, "--print-url", fixture.originURL("track.mp3").absoluteString,
                "--print-url", fixture.originURL("track.flac").absoluteString,
            ],
            standardOutput: output)
        let lines = await ChildOutput.poll(output, running: { process.isRunning }) {
            $0.split(separator: "\n").count >= 2 && $0.hasSuffix("\n")
        }.split(separator: "\n").map(String.init)
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
        process.kill(SIGTERM)
        await process.exit()
        #expect(process.endedBySignal == true)
    }

    @Test func exitsWhenIdle() async throws {
        let cachetool = try #require(Self.cachetool)
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("serve-idle-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let errors = store.path + ".err"
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = try ChildProcess(
            cachetool.path, ["serve", "--store", store.path, "--idle-exit", "0.5"], standardError: errors)
        await process.exit()
        let log = ChildOutput.text(errors)
        #expect(process.terminationStatus == 0)
        #expect(log.contains("serving") && log.contains("port"))
    }

    @Test func refusesBadArguments() async throws {
        let cachetool = try #require(Self.cachetool)
        for arguments in [["--port", "70000"], ["--print-url", "file:///etc/passwd"], ["--idle-exit", "-1"]] {
            let process = try ChildProcess(
                cachetool.path,
                ["serve", "--store", FileManager.default.temporaryDirectory.path + "/unused-\(UUID())"] + arguments)
            await process.exit()
            #expect(process.terminationStatus == 2, "\(arguments)")
        }
    }

    @Test func originAllowWithAPortServesThatOriginAndJudgesItsRedirects() async throws {
        let cachetool = try #require(Self.cachetool)
        let content = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        let forbidden = try ScriptedOrigin { request, reply in reply.serve(content, for: request) }
        defer { forbidden.stop() }
        let hidden = forbidden.url("/hidden.bin")
        let origin = try ScriptedOrigin { request, reply in
            if request.path == "/moved.bin" {
                reply.respond(status: 302, headers: ["Location": hidden.absoluteString])
            } else {
                reply.serve(content, for: request)
            }
        }
        defer { origin.stop() }
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("serve-allow-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        let errors = store.path + ".err"
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = try ChildProcess(
            cachetool.path,
            [
                "serve", "--store", store.path, "--secret", "s3cret", "--idle-exit", "5", "--origin-allow",
                "127.0.0.1:\(origin.port)",
            ],
            standardError: errors)
        defer { Self.stop(process) }
        let log = await Self.portLine(errors, of: process)
        let port = try #require(
            log.split(separator: "port ").last.flatMap { Int($0.prefix { $0.isNumber }) }, "\(log)")
        let base = "http://127.0.0.1:\(port)"
        let served = try await Curl.run([base + ServerRoute.path(for: origin.url("/track.bin"), secret: "s3cret")])
        #expect(served.status == 200 && served.body == content)
        let moved = try await Curl.run([base + ServerRoute.path(for: origin.url("/moved.bin"), secret: "s3cret")])
        #expect(moved.status == 502)
        #expect(forbidden.requests.isEmpty)
        let other = try await Curl.run([base + ServerRoute.path(for: hidden, secret: "s3cret")])
        #expect(other.status == 403)
    }

    @Test func refusesAnOriginPatternThatCanNeverMatch() async throws {
        let cachetool = try #require(Self.cachetool)
        for pattern in ["127.0.0.1:70000", "127.1:8080", "cdn.example.com/music/", "::1"] {
            let errors = FileManager.default.temporaryDirectory.path + "/serve-pattern-\(UUID()).err"
            defer { try? FileManager.default.removeItem(atPath: errors) }
            let process = try ChildProcess(
                cachetool.path,
                [
                    "serve", "--store", FileManager.default.temporaryDirectory.path + "/unused-\(UUID())",
                    "--idle-exit", "1", "--origin-allow", pattern,
                ],
                standardError: errors)
            await process.exit()
            let log = ChildOutput.text(errors)
            #expect(process.terminationStatus == 2, "\(pattern)")
            #expect(log.contains("--origin-allow") && log.contains(pattern), "\(log)")
        }
    }

    /// What the server has written to `errors` once it names its port
    /// (or all it wrote, if it ended first).
    static func portLine(_ errors: String, of process: ChildProcess) async -> String {
        await ChildOutput.poll(errors, running: { process.isRunning }) { text in
            text.split(separator: "port ").count > 1 && text.split(separator: "port ").last?.contains("\n") == true
        }
    }

    /// Stops a server left running: `SIGTERM` ends it at once.
    static func stop(_ process: ChildProcess) {
        process.kill(SIGTERM)
        process.waitUntilExit()
    }

    /// Whether process `pid` ignores `SIGPIPE` (its `SigIgn` mask in /proc).
    static func ignoresSIGPIPE(_ pid: Int32) throws -> Bool {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") })
        let mask = try #require(UInt64(line.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16))
        return mask & (1 << (UInt64(SIGPIPE) - 1)) != 0
    }

    @Test func clientsHangingUpMidBodyLeaveTheServerRunningWithSIGPIPEUntouched() async throws {
        let cachetool = try #require(Self.cachetool)
        let content = Data((0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let origin = try ScriptedOrigin { request, reply in reply.serve(content, for: request) }
        defer { origin.stop() }
        let store = FileManager.default.temporaryDirectory.appendingPathComponent("serve-hangup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: store) }
        // The child starts with the default disposition of SIGPIPE: an ignored
        // signal is inherited, and other suites of this process ignore it.
        let errors = store.path + ".err"
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let process = try ChildProcess(
            "/usr/bin/env",
            [
                "--default-signal=PIPE", cachetool.path, "serve", "--store", store.path, "--secret", "s3cret",
                "--idle-exit", "10", "--origin-allow", "127.0.0.1:\(origin.port)",
            ],
            standardError: errors)
        defer { Self.stop(process) }
        let log = await Self.portLine(errors, of: process)
        let port = try #require(
            log.split(separator: "port ").last.flatMap { Int($0.prefix { $0.isNumber }) }, "\(log)")
        #expect(try !Self.ignoresSIGPIPE(process.processIdentifier), "the server ignores SIGPIPE process-wide")
        let path = ServerRoute.path(for: origin.url("/big.bin"), secret: "s3cret")
        for _ in 0..<6 {
            // A client that reads the head and a little, then resets the connection mid-body.
            let client = try RawClient(port: port, receiveBuffer: 4096)
            client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            let descriptor = client.descriptor
            let read = try await offPool { () -> Int in
                var buffer = [UInt8](repeating: 0, count: 4096)
                return buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            }
            #expect(read > 0)
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            shutdown(descriptor, Int32(SHUT_RDWR))
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(process.isRunning)
        let ping = try await Curl.run(["http://127.0.0.1:\(port)/ping"])
        #expect(ping.status == 200)
        #expect(process.isRunning)
    }
}
