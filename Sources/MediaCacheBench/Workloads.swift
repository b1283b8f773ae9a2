import Foundation

/// The sizes of every workload and the data they use, generated from
/// fixed seeds so that the engine and each baseline see the same bytes.
/// All values are random bytes (incompressible, like media).
struct Workloads: Sendable {
    /// Timed repetitions per measurement; the median is reported.
    var repetitions = 3

    /// Streaming: total bytes, appended in pieces of `streamPiece`.
    var streamBytes = 1 << 30
    var streamPiece = 64 << 10

    /// Small values: this many keys of `smallSize` bytes.
    var smallCount = 10_000
    var smallSize = 1 << 10
    /// One-commit-per-put sets are timed in blocks of this many (each
    /// commit fsyncs); the median block is reported.
    var singleSetBlock = 2_000
    /// Passes over all keys, in a random order, for gets.
    var getPasses = 5

    /// Large values: this many of `largeSize` bytes.
    var largeCount = 40
    var largeSize = 5 << 20

    /// Range reads: `rangeReads` reads of `rangeReadSize` bytes at random
    /// offsets of one entry of `rangeEntryBytes`; the raw-lmdb baseline
    /// stores it as chunks of `rawChunkSize`.
    var rangeEntryBytes = 256 << 20
    var rangeReadSize = 64 << 10
    var rangeReads = 2_000
    var rawChunkSize = 256 << 10

    /// Churn: values log-uniform in `churnMinSize...churnMaxSize` until
    /// `churnTotalBytes` were written into a store limited to `churnLimit`.
    var churnLimit = 256 << 20
    var churnTotalBytes = 3 << 29  // 1.5 GiB
    var churnMinSize = 1 << 10
    var churnMaxSize = 16 << 20
    /// Eviction goes down to this share of the limit (the engine's default).
    var churnLowWater = 0.9

    /// Playback: the track replayed from the store (100 MB, as issue 4 asks).
    var playbackEntryBytes = 100_000_000

    /// Raw-lmdb batches streamed chunks into commits of this many bytes,
    /// as the engine's writer does.
    var streamCommitBytes = 4 << 20

    static let full = Workloads()

    static let quick = Workloads(
        repetitions: 3,
        streamBytes: 64 << 20,
        smallCount: 1_000, singleSetBlock: 200, getPasses: 3,
        largeCount: 6,
        rangeEntryBytes: 16 << 20, rangeReads: 300,
        churnLimit: 32 << 20, churnTotalBytes: 160 << 20, churnMaxSize: 4 << 20,
        playbackEntryBytes: 16_000_000)

    // MARK: Seeds

    static let keySeed: UInt64 = 0x4B45_5953
    static let smallSeed: UInt64 = 0x534D_414C_4C
    static let largeSeed: UInt64 = 0x4C41_5247_45
    static let rangeSeed: UInt64 = 0x5241_4E47_45
    static let streamSeed: UInt64 = 0x5354_5245_414D
    static let churnSeed: UInt64 = 0x4348_5552_4E
    static let orderSeed: UInt64 = 0x4F52_4445_52

    // MARK: Data

    /// URL-like keys, as a media cache sees them (about 90 bytes).
    func smallKeys() -> [String] {
        var rng = SplitMix64(seed: Self.keySeed)
        return (0..<smallCount).map { index in
            let token = String(rng.next(), radix: 16) + String(rng.next(), radix: 16)
            return "https://media.example.com/v1/tracks/\(index)/segment-\(index % 97).m4s?token=\(token)"
        }
    }

    func smallValues() -> [Data] {
        var rng = SplitMix64(seed: Self.smallSeed)
        return (0..<smallCount).map { _ in Self.randomData(smallSize, &rng) }
    }

    func largeKeys() -> [String] {
        (0..<largeCount).map { "https://media.example.com/v1/albums/\($0)/track.bin" }
    }

    func largeValues() -> [Data] {
        var rng = SplitMix64(seed: Self.largeSeed)
        return (0..<largeCount).map { _ in Self.randomData(largeSize, &rng) }
    }

    func rangeEntry() -> Data {
        var rng = SplitMix64(seed: Self.rangeSeed)
        return Self.randomData(rangeEntryBytes, &rng)
    }

    /// Random read offsets into the range entry (not aligned to anything).
    func rangeOffsets(repetition: Int) -> [Int] {
        var rng = SplitMix64(seed: Self.orderSeed &+ UInt64(repetition))
        let span = UInt64(rangeEntryBytes - rangeReadSize + 1)
        return (0..<rangeReads).map { _ in Int(rng.next() % span) }
    }

    /// The sizes of the churn values, in order, summing to at least
    /// `churnTotalBytes`.
    func churnSizes() -> [Int] {
        var rng = SplitMix64(seed: Self.churnSeed)
        var sizes: [Int] = []
        var total = 0
        while total < churnTotalBytes {
            let size = rng.logUniform(churnMinSize, churnMaxSize)
            sizes.append(size)
            total += size
        }
        return sizes
    }

    func churnKey(_ index: Int) -> String {
        "https://media.example.com/v1/churn/\(index)/audio.bin"
    }

    /// A random permutation of `0..<count` for a pass.
    static func order(count: Int, pass: Int) -> [Int] {
        var rng = SplitMix64(seed: orderSeed &+ 1000 &+ UInt64(pass))
        return Array(0..<count).shuffled(using: &rng)
    }

    static func randomData(_ count: Int, _ rng: inout SplitMix64) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { rng.fill($0) }
        return data
    }

    /// `1 GiB`, `256 MiB`, `5 MiB`, `1 KiB`.
    static func describe(bytes: Int) -> String {
        if bytes >= 1 << 30 && bytes % (1 << 30) == 0 { return "\(bytes >> 30) GiB" }
        if bytes >= 1 << 30 { return String(format: "%.1f GiB", Double(bytes) / Double(1 << 30)) }
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 20 { return String(format: "%.1f MiB", Double(bytes) / Double(1 << 20)) }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) B"
    }

    /// `10,000`.
    static func grouped(_ count: Int) -> String {
        let digits = Array(String(count))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }
}
