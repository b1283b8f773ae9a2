/// Tracks how far resident memory grows above where it was at creation,
/// by sampling: the total (`VmRSS`) and its anonymous (heap) and
/// file-backed (mapped files) parts, each with its own peak.
struct MemorySampler {
    private let startTotal: Int
    private let startAnonymous: Int
    private let startFile: Int
    private var peakTotal: Int
    private var peakAnonymous: Int
    private var peakFile: Int

    init() {
        startTotal = MemoryProbe.residentBytes() ?? 0
        startAnonymous = MemoryProbe.anonymousBytes() ?? 0
        startFile = MemoryProbe.fileBackedBytes() ?? 0
        peakTotal = startTotal
        peakAnonymous = startAnonymous
        peakFile = startFile
    }

    /// `VmRSS` when sampling began.
    var startResident: Int { startTotal }

    mutating func sample() {
        if let value = MemoryProbe.residentBytes() { peakTotal = max(peakTotal, value) }
        if let value = MemoryProbe.anonymousBytes() { peakAnonymous = max(peakAnonymous, value) }
        if let value = MemoryProbe.fileBackedBytes() { peakFile = max(peakFile, value) }
    }

    /// Peak growth of `VmRSS`, in bytes.
    var totalGrowth: Int { peakTotal - startTotal }
    /// Peak growth of `RssAnon`, in bytes.
    var anonymousGrowth: Int { peakAnonymous - startAnonymous }
    /// Peak growth of `RssFile`, in bytes.
    var fileGrowth: Int { peakFile - startFile }
}
