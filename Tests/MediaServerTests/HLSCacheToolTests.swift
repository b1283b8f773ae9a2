import Foundation
import LoopbackNginx
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `cachetool hls-get` as a process: killed with SIGKILL mid-way and
/// run again, it fetches only what the store lacks (counted in nginx's log,
/// each request tagged with the run that sent it); then `ls --hls`, `info`
/// and `rm` of the asset.
@Suite("cachetool HLS", .serialized, .timeLimit(.minutes(3)))
struct HLSCacheToolTests {
    /// The resources of master.m3u8 with the first variant, the default audio and the subtitles.
    static let resources: Set<String> = [
        "/master.m3u8", "/high.m3u8", "/english.m3u8", "/high_vtt.m3u8", "/high_0.ts", "/high_1.ts", "/english_0.ts",
        "/english_1.ts", "/english_2.ts", "/high0.vtt", "/high1.vtt",
    ]

    /// Starts cachetool with its output written to `output`.
    static func cachetool(_ arguments: [String], output: String) throws -> ChildProcess {
        guard let executable = CacheToolServeTests.cachetool else { throw CocoaError(.fileNoSuchFile) }
        return try ChildProcess(executable.path, arguments, standardOutput: output)
    }

    static func runToEnd(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let scratch = try TemporaryDirectory("hls-cachetool")
        defer { scratch.remove() }
        let process = try cachetool(arguments, output: scratch.path("output"))
        await process.exit()
        return (process.terminationStatus ?? -1, ChildOutput.text(scratch.path("output")))
    }

    @Test func killedDownloadResumesWithOnlyTheMissingResourcesThenListsAndRemovesTheAsset() async throws {
        signal(SIGPIPE, SIG_IGN)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let root = directory.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: ServerFixture.fixtures.appendingPathComponent("HLS/master"), to: root)
        let runs = directory.appendingPathComponent("runs.log")
        // Run 1 hangs on high_1.ts (the fourth segment of the plan): nginx passes it to a
        // socket that never answers, so the kill lands mid-way whatever the machine's load.
        // Every request is logged with the run that sent it.
        let blackhole = try Blackhole()
        defer { blackhole.close() }
        let nginx = try LoopbackNginx(
            serving: root, in: directory.appendingPathComponent("nginx"),
            httpDirectives: "log_format runs '$http_x_run $uri';",
            serverDirectives: """
                access_log \(runs.path) runs;
                location = /high_1.ts { if ($http_x_run = 1) { proxy_pass http://127.0.0.1:\(blackhole.port); } }
                """)
        defer { nginx.stop() }
        let store = directory.appendingPathComponent("store")
        let master = nginx.url("master.m3u8").absoluteString
        let arguments = [
            "hls-get", "--store", store.path, master, "--subtitles", "all", "--parallel", "1",
        ]
        // Run 1: killed while it waits for high_1.ts, three segments in the store.
        let firstOutput = directory.appendingPathComponent("run-1.out").path
        let first = try Self.cachetool(arguments + ["--header", "X-Run: 1"], output: firstOutput)
        let progress = await ChildOutput.poll(firstOutput, seconds: 120, running: { first.isRunning }) {
            $0.contains("segments 3/")
        }
        #expect(progress.contains("segments 3/"), "\(progress)")
        try await Task.sleep(for: .milliseconds(200))  // high_1.ts requested
        first.kill(SIGKILL)
        await first.exit()
        #expect(first.endedBySignal == true)
        // What the store holds after the kill.
        let listed = try await Self.runToEnd(["ls", "--store", store.path, "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])
        let kept = Set(
            (json["entries"] as? [[String: Any]] ?? []).compactMap { entry -> String? in
                guard entry["complete"] as? Bool == true, let key = entry["key"] as? String else { return nil }
                return URL(string: key)?.path
            })
        #expect(
            kept == [
                "/master.m3u8", "/high.m3u8", "/english.m3u8", "/high_vtt.m3u8", "/high_0.ts", "/english_0.ts",
                "/high0.vtt",
            ])
        // Run 2: to the end.
        let second = try await Self.runToEnd(arguments + ["--header", "X-Run: 2", "--json"])
        #expect(second.status == 0, "\(second.output)")
        try await Task.sleep(for: .milliseconds(300))
        let lines = try String(contentsOf: runs, encoding: .utf8).split(separator: "\n")
        let secondRun = lines.filter { $0.hasPrefix("2 ") }.map { String($0.dropFirst(2)) }
        #expect(Set(secondRun) == Self.resources.subtracting(kept), "run 2 fetched \(secondRun), store had \(kept)")
        #expect(secondRun.count == Set(secondRun).count, "nothing twice")
        // ls --hls: one asset, three media playlists, all complete and pinned.
        let assets = try await Self.runToEnd(["ls", "--hls", "--json", "--store", store.path])
        let assetJSON = try #require(try JSONSerialization.jsonObject(with: Data(assets.output.utf8)) as? [String: Any])
        let list = try #require(assetJSON["assets"] as? [[String: Any]])
        #expect(list.count == 1)
        #expect(list.first?["key"] as? String == master)
        #expect(list.first?["complete"] as? Bool == true && list.first?["pinned"] as? Bool == true)
        #expect(list.first?["entries"] as? Int == Self.resources.count)
        let tracks = try #require(list.first?["tracks"] as? [[String: Any]])
        #expect(Set(tracks.compactMap { $0["role"] as? String }) == ["variant", "AUDIO", "SUBTITLES"])
        #expect(tracks.allSatisfy { $0["storedSegments"] as? Int == $0["totalSegments"] as? Int })
        let info = try await Self.runToEnd(["info", "--store", store.path, master])
        #expect(info.output.contains("hls asset") && info.output.contains("3/3"))
        // rm of the master's key removes the whole asset.
        #expect(try await Self.runToEnd(["rm", "--store", store.path, master]).status == 0)
        let after = try await Self.runToEnd(["ls", "--store", store.path])
        #expect(after.output.isEmpty, "\(after.output)")
    }
}

/// A loopback socket that accepts connections into its backlog and never
/// answers: a request sent to it waits.
final class Blackhole: @unchecked Sendable {
    let descriptor: Int32
    let port: Int

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw CocoaError(.fileWriteUnknown) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(descriptor) }
}
