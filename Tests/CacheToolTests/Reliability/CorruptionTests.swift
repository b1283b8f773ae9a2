import Foundation
import Testing

/// Issue 5, reliability 3: damaged copies of data.mdb. `CORRUPTION_CASES`
/// and `CORRUPTION_SEED` override the case count (30 here; Tools/corruption-suite
/// runs hundreds) and the seed.
@Suite struct CorruptionTests {
    /// On a plain store and on an encrypted one (where a flipped byte in a
    /// sealed block fails its authentication, and a wrong key is refused).
    @Test(arguments: [false, true])
    func damagedFilesAreReportedNeverServedAndNeverCrashTheTool(encrypted: Bool) async throws {
        let environment = ProcessInfo.processInfo.environment
        let cases = environment["CORRUPTION_CASES"].flatMap { Int($0) } ?? 30
        let seed = environment["CORRUPTION_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(1) << 40)
        var suite = CorruptionSuite(seed: seed, cases: cases, encrypted: encrypted)
        try await suite.run()
        print(
            "corruption suite (\(encrypted ? "encrypted" : "plain")): \(cases) cases, seed \(seed) "
                + "(CORRUPTION_SEED=\(seed) repeats them)\n\(suite.summary)")
        #expect(suite.failures.isEmpty, "\(suite.failures.joined(separator: "\n"))")
        let detected = suite.counts.values.reduce(0) { $0 + ($1[.detected] ?? 0) + ($1[.crashContained] ?? 0) }
        #expect(detected > 0, "no case was detected: the suite damages nothing")
    }
}
