import Foundation

/// Runs the workloads against the engine and both baselines, in one
/// process, on the same data, in scratch folders under one root that is
/// removed at the end.
///
/// Streaming runs first, so that the process-wide peak RSS (`VmHWM`) it
/// reads is the stream's own.
final class BenchmarkRunner {
    let options: BenchOptions
    let workloads: Workloads
    /// The folder every scratch store lives in.
    let root: URL
    private(set) var results: [BenchResult] = []
    private(set) var notes: [String] = []
    /// Verification failures (wrong bytes, bad counters); the run still
    /// reports, then exits non-zero.
    private(set) var problems: [String] = []
    private var scratchCounter = 0

    init(options: BenchOptions) throws {
        self.options = options
        self.workloads = options.quick ? .quick : .full
        let parent = URL(fileURLWithPath: options.directory ?? NSTemporaryDirectory(), isDirectory: true)
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let name = "mediacache-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        root = parent.appendingPathComponent(name, isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: false)
    }

    deinit {
        removeRoot()
    }

    /// Runs every selected workload group and returns the report.
    func run() throws -> BenchReport {
        defer { removeRoot() }
        let started = Stopwatch.now()
        let w = workloads
        notes.append(
            "mediacache-bench \(options.quick ? "--quick" : "(full)"): median of \(w.repetitions) repetitions"
                + " unless noted; random (incompressible) bytes from SplitMix64; scratch under \(root.deletingLastPathComponent().path)"
        )
        notes.append(
            "ratio = value / baseline_value: above 1 is better for throughput, below 1 is better where lower is better."
        )
        if options.runs("stream") { try runStreaming() }
        if options.runs("small") { try runSmallValues() }
        if options.runs("large") { try runLargeValues() }
        if options.runs("range") { try runRangeReads() }
        if options.runs("churn") { try runChurn() }
        if options.runs("facade") { try runFacade() }
        if options.runs("playback") { try runPlayback() }
        if options.runs("server") { try runServer() }
        if options.runs("scheduling") { try runScheduling() }
        if options.runs("hls") { try runHLS() }
        if options.runs("crypto") { try runCrypto() }
        if options.runs("encrypted") { try runEncrypted() }
        if options.runs("scale") { try runScale() }
        if options.runs("network") { try runNetwork() }
        let seconds = Double(Stopwatch.now() - started) / 1e9
        notes.append(
            String(format: "Total run time %.0f s on %d CPU(s).", seconds, ProcessInfo.processInfo.activeProcessorCount)
        )
        for problem in problems { notes.append("VERIFICATION FAILED: " + problem) }
        return BenchReport(results: results, notes: notes)
    }

    // MARK: Results

    func record(_ result: BenchResult) {
        results.append(result)
        let against = result.baseline.map { " vs \($0) \(BenchReport.format(result.baselineValue ?? 0))" } ?? ""
        log("  \(result.name): \(BenchReport.format(result.value)) \(result.unit)\(against)")
    }

    /// Records one row per baseline for the same engine figure.
    func record(_ name: String, unit: String, engine: Double, baselines: [(String, Double)]) {
        if baselines.isEmpty { record(BenchResult(name: name, unit: unit, value: engine)) }
        for (baseline, value) in baselines {
            record(BenchResult(name: name, unit: unit, value: engine, baseline: baseline, baselineValue: value))
        }
    }

    func note(_ text: String) {
        notes.append(text)
        log("  note: " + text)
    }

    /// Notes a failed check (a wrong byte, a bad counter) without stopping.
    func verify(_ condition: Bool, _ message: @autoclosure () -> String) {
        guard !condition else { return }
        let text = message()
        problems.append(text)
        log("  VERIFICATION FAILED: " + text)
    }

    func log(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    // MARK: Scratch space

    /// A new, empty folder under the root.
    func freshDirectory(_ name: String) throws -> URL {
        scratchCounter += 1
        let url = root.appendingPathComponent("\(scratchCounter)-\(name)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    func remove(_ url: URL) {
        try? FileManager.default.removeItem(at: url)
    }

    private func removeRoot() {
        if FileManager.default.fileExists(atPath: root.path) { remove(root) }
    }

    // MARK: Timing helpers

    /// Seconds since `start` (from ``Stopwatch/now()``).
    static func seconds(since start: UInt64) -> Double {
        Double(Stopwatch.now() - start) / 1e9
    }

    /// Times each call of `body(index)` on its own, outside the reported
    /// timings, to tell rare slow calls (such as a batched write that a
    /// read triggers) from the common path.
    static func profileCalls(
        _ indices: [Int], slowerThan threshold: Double, _ body: (Int) throws -> Void
    ) rethrows -> CallProfile {
        var profile = CallProfile()
        for index in indices {
            let start = Stopwatch.now()
            try body(index)
            let seconds = Self.seconds(since: start)
            profile.calls += 1
            profile.totalSeconds += seconds
            if seconds > threshold {
                profile.slowCalls += 1
                profile.slowSeconds += seconds
            }
        }
        return profile
    }

    /// What ``profileCalls(_:slowerThan:_:)`` found.
    struct CallProfile {
        var calls = 0
        var totalSeconds = 0.0
        var slowCalls = 0
        var slowSeconds = 0.0

        /// One line: how many calls were slow, their share of the time,
        /// and the mean of the others.
        func summary(threshold: Double) -> String {
            let fastCalls = max(1, calls - slowCalls)
            guard slowCalls > 0 else {
                return String(
                    format: "none of %ld calls took > %.2f ms; they average %.1f µs", calls, threshold * 1e3,
                    totalSeconds / Double(max(1, calls)) * 1e6)
            }
            return String(
                format:
                    "%ld of %ld calls took > %.2f ms (%.0f%% of the time, %.2f ms each on average); the others average %.1f µs",
                slowCalls, calls, threshold * 1e3, totalSeconds > 0 ? 100 * slowSeconds / totalSeconds : 0,
                slowSeconds / Double(slowCalls) * 1e3,
                (totalSeconds - slowSeconds) / Double(fastCalls) * 1e6)
        }
    }

    /// Bytes per second in MB/s (10^6 bytes).
    static func megabytesPerSecond(_ bytes: Int, _ seconds: Double) -> Double {
        Double(bytes) / seconds / 1e6
    }
}
