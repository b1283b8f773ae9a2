import Foundation
import LoopbackNginx
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `cachetool hls-get` as a process: killed with SIGKILL mid-way and
/// run again, it fetches only what the store lacks (counted in nginx's log,
/// each request tagged with the run that sent it); then `ls --hls`, `info`
/// and `rm` of the asset.
@Suite("cachetool HLS", .serialized)
struct HLSCacheToolTests {
    /// The resources of master.m3u8 with the first variant, the default audio and the subtitles.
    static let resources: Set<String> = [
        "/master.m3u8", "/high.m3u8", "/english.m3u8", "/high_vtt.m3u8", "/high_0.ts", "/high_1.ts", "/english_0.ts",
        "/english_1.ts", "/english_2.ts", "/high0.vtt", "/high1.vtt",
    ]

    static func cachetool(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        guard let executable = CacheToolServeTests.cachetool else { throw CocoaError(.fileNoSuchFile) }
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    static func runToEnd(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        let (process, output) = try cachetool(arguments)
        return try await offPool {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
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
        // Run 1 slow (6 kB/s a connection: high_0.ts takes 5 s, high_1.ts 3.5 s), so the
        // kill lands mid-way; every request logged with its run.
        let nginx = try LoopbackNginx(
            serving: root, in: directory.appendingPathComponent("nginx"),
            httpDirectives: "log_format runs '$http_x_run $uri';",
            serverDirectives: "if ($http_x_run = 1) { set $limit_rate 6k; } access_log \(runs.path) runs;")
        defer { nginx.stop() }
        let store = directory.appendingPathComponent("store")
        let master = nginx.url("master.m3u8").absoluteString
        let arguments = [
            "hls-get", "--store", store.path, master, "--subtitles", "all", "--parallel", "1",
        ]
        // Run 1: killed once two segments are in the store.
        let (first, output) = try Self.cachetool(arguments + ["--header", "X-Run: 1"])
        let progressed = try await offPool { () -> Bool in
            var text = ""
            while !text.contains("segments 2/") {
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { return false }
                text += String(decoding: data, as: UTF8.self)
            }
            return true
        }
        #expect(progressed)
        kill(first.processIdentifier, SIGKILL)
        try await offPool { first.waitUntilExit() }
        try #require(first.terminationReason == .uncaughtSignal, "run 1 ended before the kill: the machine is too slow")
        // What the store holds after the kill.
        let listed = try await Self.runToEnd(["ls", "--store", store.path, "--json"])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])
        let kept = Set(
            (json["entries"] as? [[String: Any]] ?? []).compactMap { entry -> String? in
                guard entry["complete"] as? Bool == true, let key = entry["key"] as? String else { return nil }
                return URL(string: key)?.path
            })
        #expect(kept.count >= 2 + 4 && kept.count < Self.resources.count, "\(kept)")
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
