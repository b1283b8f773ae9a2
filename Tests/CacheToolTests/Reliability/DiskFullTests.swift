import Foundation
import MediaStore
import Testing

/// Issue 5, reliability 2: a full disk (RLIMIT_FSIZE in a child, with
/// SIGXFSZ ignored so the write fails instead of killing it) and a tiny
/// map. The write fails with a typed error, nothing else changes, and
/// writes succeed again once there is room.
@Suite struct DiskFullTests {
    /// Runs `cachetool arguments` with a file-size limit of `limit` bytes.
    /// `trap '' XFSZ` sets SIGXFSZ to ignored, which exec keeps.
    static func cachetoolLimited(_ limit: Int, _ arguments: [String], input: Data) async throws -> ToolProcess.Result {
        let tool = try ToolProcess.executable("cachetool").path
        let script = #"trap '' XFSZ; exec prlimit --fsize="$0" "$@""#
        return try await ToolProcess.run(
            URL(fileURLWithPath: "/bin/sh"), ["-c", script, String(limit), tool] + arguments, input: input)
    }

    @Test(.enabled(if: ExternalTool.available("prlimit"), "needs prlimit (util-linux)"))
    func aWriteBeyondTheFileSizeLimitFailsCleanlyAndLaterWritesSucceed() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "prlimit (util-linux) is missing")
        let directory = try TemporaryDirectory("diskfull")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 29)
        let before = random.data(500_000)
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "before", "-"], input: before).status == 0)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: store + "/data.mdb")[.size] as? Int)

        // Room for 1 MiB more, a 6 MiB value: a streamed put (several commits).
        let big = random.data(6 << 20)
        let full = try await Self.cachetoolLimited(size + (1 << 20), ["-s", store, "put", "big", "-"], input: big)
        #expect(!full.signaled, "killed by signal \(full.status)")
        #expect(full.status == 1)
        #expect(full.errors == "cachetool: the disk is full; nothing was written\n", "\(full.errors)")
        // A small whole put under the limit also gets the typed error, not a crash.
        let small = try await Self.cachetoolLimited(
            size, ["-s", store, "put", "small", "-"], input: random.data(300_000))
        #expect(small.status == 1 && small.errors.contains("the disk is full"), "\(small.errors)")

        // Consistent, committed data intact, the failed writes absent.
        let verify = try await ToolProcess.cachetool(["-s", store, "verify", "--json"])
        #expect(verify.status == 0, "\(verify.text)")
        #expect(verify.json?["clean"] as? Bool == true)
        #expect(try await ToolProcess.cachetool(["-s", store, "cat", "before"]).output == before)
        let keys =
            (try await ToolProcess.cachetool(["-s", store, "ls", "--json"]).json?["entries"] as? [[String: Any]])?
            .compactMap { $0["key"] as? String }
        #expect(keys == ["before"])

        // Room again: the same write succeeds.
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "big", "-"], input: big).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "cat", "big"]).output == big)
        #expect(try await ToolProcess.cachetool(["-s", store, "verify"]).status == 0)
    }

    /// A map far too small for the value: the store grows it and retries
    /// (MDB_MAP_FULL never reaches the caller while growth is possible),
    /// and the store stays consistent throughout.
    @Test func aTinyMapGrowsAndTheStoreStaysConsistent() async throws {
        let directory = try TemporaryDirectory("tinymap")
        defer { directory.remove() }
        var random = SplitMix64(seed: 31)
        let values = (0..<6).map { _ in random.data(700_000) }
        do {
            let store = try MediaStore(
                directory: directory.url, configuration: StoreConfiguration(initialMapSize: 256 << 10))
            for (index, value) in values.enumerated() { try store.put(value, forKey: "v\(index)") }
            #expect(try store.statistics().mapSize > 4 << 20)
        }
        let verify = try await ToolProcess.cachetool(["-s", directory.url.path, "verify"])
        #expect(verify.status == 0, "\(verify.text)")
        for (index, value) in values.enumerated() {
            #expect(try await ToolProcess.cachetool(["-s", directory.url.path, "cat", "v\(index)"]).output == value)
        }
    }
}
