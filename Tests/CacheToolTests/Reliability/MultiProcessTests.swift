import Foundation
import LoopbackNginx
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 5, reliability 6: cachetool reads while another process streams,
/// fills ranges, removes and evicts (crash-writer, the crash test's writer,
/// run without the kill). Every answer is consistent: verify is clean in
/// every snapshot, nothing reads as corrupt, and what `cat` returns matches
/// a digest the entry had. `MULTIPROCESS_SECONDS` sets the duration (3 s).
@Suite(.timeLimit(.minutes(3))) struct MultiProcessTests {
    @Test func cachetoolReadsConsistentlyWhileAnotherProcessWrites() async throws {
        let seconds = ProcessInfo.processInfo.environment["MULTIPROCESS_SECONDS"].flatMap { Double($0) } ?? 3
        let directory = try TemporaryDirectory("multiprocess")
        defer { directory.remove() }
        let store = directory.path("store")
        let writer = try ChildProcess(
            try ToolProcess.executable("crash-writer").path, [store, "4242", directory.path("ack.log")])
        defer {
            writer.kill(SIGKILL)
            writer.waitUntilExit()
        }
        // Wait for the writer to create the store.
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: store + "/data.mdb") && Date() < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .milliseconds(200))

        var rounds = 0
        var verified = 0
        var catsServed = 0
        var catsMissed = 0
        var catsOfVanishedVersions = 0
        var problems: [String] = []
        let end = Date().addingTimeInterval(seconds)
        // The duration, and past it until an entry was read (up to 100
        // rounds): beside the whole parallel suite a round's children
        // can take longer than the duration.
        while (Date() < end || (catsServed == 0 && rounds < 100)) && problems.count < 5 {
            rounds += 1
            let stats = try await ToolProcess.cachetool(["-s", store, "stats", "--json"])
            if stats.status != 0 { problems.append("stats: \(stats.status) \(stats.errors)") }
            let ls = try await ToolProcess.cachetool(["-s", store, "ls", "--json", "--complete"])
            if ls.status != 0 { problems.append("ls: \(ls.status) \(ls.errors)") }
            let entries = ls.json?["entries"] as? [[String: Any]] ?? []
            if let entry = entries.randomElement(), let key = entry["key"] as? String {
                let before = try await ToolProcess.cachetool(["-s", store, "info", "--json", key]).json
                let cat = try await ToolProcess.cachetool(["-s", store, "cat", key])
                let after = try await ToolProcess.cachetool(["-s", store, "info", "--json", key]).json
                let digestBefore = before?["contentDigest"] as? String
                let digestAfter = after?["contentDigest"] as? String
                // The same version before and after: the entry did not change
                // around the cat. Equal digests alone do not say so: the
                // writer puts the same bytes again (empty values, a small pool
                // of contents), so A, then B, then A again looks unchanged.
                let versionBefore = before?["version"] as? Int
                let unchanged = versionBefore != nil && versionBefore == after?["version"] as? Int
                switch cat.status {
                case 0:
                    catsServed += 1
                    let digest = MediaStoreDigest.hex(cat.output)
                    // cat streams exactly the version it looked up (a replacement
                    // mid-stream makes it fail), so when the entry did not change
                    // around it, its bytes must be that version's. If it changed
                    // (possibly more than once), the bytes must still be whole:
                    // one of the digests seen, unless a version came and went
                    // between our looks, which is counted, not failed.
                    if unchanged, digest != digestBefore {
                        problems.append("cat \(key): bytes do not match the unchanged entry's digest")
                    } else if !unchanged, ![digestBefore, digestAfter].contains(digest) {
                        catsOfVanishedVersions += 1
                    }
                case 1: catsMissed += 1  // removed, evicted, or replaced while being read
                default: problems.append("cat \(key): exit \(cat.status) \(cat.errors)")
                }
            }
            if rounds % 3 == 1 {
                let verify = try await ToolProcess.cachetool(["-s", store, "verify", "--json"])
                if verify.status != 0 {
                    problems.append("verify: exit \(verify.status) \(verify.text) \(verify.errors)")
                }
                verified += 1
            }
        }
        #expect(writer.isRunning, "the writer stopped by itself")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        #expect(catsServed > 0, "no entry was read while the writer ran")
        print(
            "multi-process: \(rounds) rounds in \(seconds) s, \(verified) clean verifies, \(catsServed) cats served, \(catsMissed) missed (key gone or replaced meanwhile), \(catsOfVanishedVersions) of a version replaced between looks"
        )
    }
}
