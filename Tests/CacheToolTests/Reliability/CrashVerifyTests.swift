import Foundation
import LoopbackNginx
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Issue 5, reliability 1, with cachetool: crash-writer (Tests/CrashWriter)
/// is SIGKILLed at a random moment, then `cachetool verify` checks the
/// store exactly as the crash left it (read-only, before any recovery),
/// and `crash-writer check` checks it against the acknowledgement log.
/// Tools/crash-loop-verify runs many more rounds. `CRASH_VERIFY_ROUNDS`
/// overrides the count (8).
@Suite struct CrashVerifyTests {
    @Test func verifyIsCleanAfterEverySigkill() async throws {
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["CRASH_VERIFY_ROUNDS"].flatMap { Int($0) } ?? 8
        let master = environment["CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(1) << 40)
        var random = SplitMix64(seed: master)
        let directory = try TemporaryDirectory("crashverify")
        defer { directory.remove() }
        let store = directory.path("store")
        let log = directory.path("ack.log")
        let writerURL = try ToolProcess.executable("crash-writer")
        var acknowledged = 0
        // The premise (some writes were acknowledged before a kill) is
        // checked, not assumed: on a loaded machine a writer can be killed
        // before it even initialised the store, so rounds go on (with longer
        // delays) until one acknowledged something, up to three times as many.
        var round = 0
        while round < rounds || (acknowledged == 0 && round < rounds * 3) {
            round += 1
            let seed = random.next() >> 1
            let delay = 30 + Int(random.next() % 220) + max(0, round - rounds) * 150
            let context = "round \(round), seed \(seed), killed after \(delay) ms (CRASH_SEED=\(master))"
            let writer = try ChildProcess(writerURL.path, [store, String(seed), log])
            usleep(UInt32(delay * 1000))
            writer.kill(SIGKILL)
            await writer.exit()
            guard FileManager.default.fileExists(atPath: store + "/data.mdb") else { continue }
            let verify = try await ToolProcess.cachetool(["-s", store, "verify", "--json"])
            // Killed while creating the store, before its first commit: an
            // empty LMDB file, which the next writable open initialises.
            // Legitimate only while no write was ever acknowledged.
            if verify.status != 0, acknowledged == 0, "\(verify.text) \(verify.errors)".contains("never initialised") {
                continue
            }
            #expect(verify.status == 0, "\(context): \(verify.text) \(verify.errors)")
            let check = try await ToolProcess.run(writerURL, ["check", store, log])
            #expect(check.status == 0, "\(context): \(check.text)")
            if verify.status != 0 || check.status != 0 { return }
            acknowledged +=
                check.text.split(separator: " ").first { $0.hasPrefix("acknowledged=") }
                .flatMap { Int($0.dropFirst("acknowledged=".count)) } ?? 0
        }
        #expect(acknowledged > 0, "the writer never acknowledged a write")
        print("crash + verify: \(round) rounds, \(acknowledged) operations acknowledged, master seed \(master)")
    }
}
