import Foundation

/// SplitMix64: a tiny, fast, seeded generator, so every run (and every
/// system measured in a run) sees exactly the same keys and bytes.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fills `buffer` with random (incompressible, media-like) bytes.
    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        let words = buffer.count / 8
        for index in 0..<words {
            buffer.storeBytes(of: next(), toByteOffset: index * 8, as: UInt64.self)
        }
        var tail = next()
        for index in (words * 8)..<buffer.count {
            buffer[index] = UInt8(truncatingIfNeeded: tail)
            tail >>= 8
        }
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { fill($0) }
        return result
    }

    /// A value uniform in `low...high` on a log scale.
    mutating func logUniform(_ low: Int, _ high: Int) -> Int {
        let unit = Double(next() >> 11) / Double(1 << 53)
        let value = Double(low) * exp2(log2(Double(high) / Double(low)) * unit)
        return min(high, max(low, Int(value.rounded())))
    }
}
