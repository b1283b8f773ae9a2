import Foundation

/// SplitMix64: a tiny, seeded generator, so a test sees the same keys and
/// bytes on every run (the seed reproduces a failure).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 output function (a good 64-bit mixer on its own).
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Fills `buffer` with random (incompressible) bytes: each word
    /// little-endian, a partial last word from one more `next()`.
    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        let words = buffer.count / 8
        for index in 0..<words {
            buffer.storeBytes(of: next().littleEndian, toByteOffset: index * 8, as: UInt64.self)
        }
        guard words * 8 < buffer.count else { return }
        var tail = next()
        for index in (words * 8)..<buffer.count {
            buffer[index] = UInt8(truncatingIfNeeded: tail)
            tail >>= 8
        }
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { fill($0) }
        return result
    }

    /// `count` random bytes as `Data`.
    public mutating func data(_ count: Int) -> Data {
        Data(bytes(count))
    }

    /// `count` compressible, text-like bytes.
    public mutating func text(_ count: Int) -> Data {
        let words = ["media", "cache", "chunk", "stream", "track", "seek", "range", "store", " ", "\n"]
        var data = Data()
        while data.count < count { data.append(contentsOf: words[Int(next() % UInt64(words.count))].utf8) }
        return data.prefix(count)
    }

    /// `true` with `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }
}
