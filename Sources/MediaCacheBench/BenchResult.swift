/// One row of the report: the engine's figure for a workload, and the
/// same figure for one baseline measured in the same run on the same data.
struct BenchResult: Sendable {
    /// The workload, e.g. `get 1 KiB (10,000 keys)`.
    var name: String
    /// What `value` counts, with the better direction, e.g. `ops/s (higher is better)`.
    var unit: String
    /// The engine's figure.
    var value: Double
    /// The baseline's name (`raw-lmdb`, `file-per-key`), or `nil` when the
    /// row has none.
    var baseline: String?
    /// The baseline's figure.
    var baselineValue: Double?

    /// `value / baselineValue`. For throughput (higher is better) above 1
    /// means the engine is faster; for sizes and ratios where lower is
    /// better, below 1 means the engine is better. The unit says which.
    var ratio: Double? {
        guard let baselineValue, baselineValue != 0 else { return nil }
        return value / baselineValue
    }

    init(name: String, unit: String, value: Double, baseline: String? = nil, baselineValue: Double? = nil) {
        self.name = name
        self.unit = unit
        self.value = value
        self.baseline = baseline
        self.baselineValue = baselineValue
    }

    /// Units used by the workloads.
    static let opsPerSecond = "ops/s (higher is better)"
    static let megabytesPerSecond = "MB/s (higher is better)"
    static let fileToLive = "file/live bytes (lower is better)"
    static let mebibytes = "MiB (lower is better)"
}
