import Foundation
import LoopbackNginx
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The crash loop over key rotation: `crash-writer rekey` (Tests/CrashWriter)
/// rekeys a store in small steps and SIGKILLs itself a random while after
/// a random step (or during its open); every round the store must open
/// with the old key, the new one or both (both exactly while the rekey is
/// under way), and every open must read every entry byte for byte and
/// verify clean. Every fourth round runs to the end, and the next rekeys
/// back, so kills land in several rekeys. `REKEY_CRASH_ROUNDS` and
/// `CRASH_SEED` override the round count (12) and the master seed.
@Suite struct RekeyCrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let rounds = environment["REKEY_CRASH_ROUNDS"].flatMap { Int($0) } ?? 12

    static func hex(_ key: StoreKey) -> String {
        key.bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// Opens the store read-only with `key`: the store, or `nil` when the
    /// key is refused as the wrong one.
    static func open(_ directory: URL, _ key: StoreKey) throws -> MediaStore? {
        do {
            return try MediaStore.openReadOnly(directory: directory, key: key)
        } catch StoreError.wrongKey {
            return nil
        }
    }

    @Test func sigkillDuringRekeyLosesNothing() throws {
        let writer = try #require(CrashWriterBinary.locate(), "crash-writer is not built next to the test binary")
        let master = Self.environment["CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(1) << 48)
        var generator = SplitMix64(seed: master)
        let test = try TestStore(configuration: RekeyTests.configuration(RekeyTests.oldKey))
        var corpus = RekeyTests.Corpus()
        try corpus.fill(test.store, count: 40)
        test.store.close()

        var (from, to) = (RekeyTests.oldKey, RekeyTests.newKey)
        var underWay = false
        var (midRekey, finished) = (0, 0)
        for round in 1...Self.rounds {
            let runsToEnd = round % 4 == 0
            let killStep = runsToEnd ? Int.max : Int(generator.next() % 16)
            let killAfter = UInt32(generator.next() % 3000)
            let openWith = underWay ? Int(generator.next() % 2) : 0
            let context =
                "round \(round), open with \(openWith == 0 ? "old" : "new") key, killed \(killAfter) µs after step \(killStep) (CRASH_SEED=\(master))"
            let errors = test.directory.path + "-rekey.err"
            defer { try? FileManager.default.removeItem(atPath: errors) }
            let child = try ChildProcess(
                writer.path,
                [
                    "rekey", test.directory.path, Self.hex(from), Self.hex(to), String(openWith),
                    String(min(killStep, 1 << 30)), String(killAfter),
                ],
                standardError: errors)
            child.waitUntilExit()
            let stderr = ChildOutput.text(errors)
            let killed = child.endedBySignal == true && child.terminationStatus == SIGKILL
            let ended = child.endedBySignal == false && child.terminationStatus == 0
            try #require(
                killed || ended, "the rekey failed (status \(child.terminationStatus ?? -1)), \(context): \(stderr)")

            // One key at a time: one environment per file per process.
            var opens: [Bool] = []
            var keysInStore: [Bool] = []
            for key in [from, to] {
                guard let store = try Self.open(test.directory, key) else {
                    opens.append(false)
                    continue
                }
                opens.append(true)
                keysInStore.append(store.encryption?.replaced != nil)
                try corpus.check(store)
                #expect(try store.verify().problems == [], "\(context)")
                store.close()
            }
            try #require(opens.contains(true), "neither key opens the store, \(context)")
            underWay = opens == [true, true]
            // Both keys open it exactly while the store says a rekey is under way.
            #expect(keysInStore.allSatisfy { $0 == underWay }, "\(context)")
            if underWay { midRekey += 1 }
            if ended { #expect(opens == [false, true], "\(context)") }
            if !opens[0] {
                finished += 1
                (from, to) = (to, from)
            }
        }
        #expect(midRekey > 0, "no kill landed during a rekey (CRASH_SEED=\(master))")
        #expect(finished > 0)
        print(
            "rekey crash test: \(Self.rounds) rounds, \(midRekey) left mid-rekey, \(finished) rekeys finished, master seed \(master)"
        )
    }
}
