import Foundation
import MediaStore
@_exported import TestSupport

/// The fixed store configuration and key universe shared by the writer
/// and the checker (and mirrored by `CrashTests`).
enum CrashSetup {
    /// Small chunks and a small size limit, so that values span many
    /// chunks and eviction happens all the time.
    static let configuration = StoreConfiguration(
        sizeLimit: 8 << 20, compressionLevel: 1, chunkSize: chunkSize, inlineLimit: 1024,
        initialMapSize: 64 << 20)
    static let chunkSize = 16 << 10
    /// Largest value written.
    static let maxLength = 300 << 10

    /// Keys that are put, streamed, filled, removed, expired and evicted.
    static let regularKeys: [String] =
        (0..<96).map { "k\($0)" }
        + (0..<4).map { index in
            // Longer than LMDB's 511-byte key limit: stored under a hash.
            "https://cdn.example.com/track/\(index).mp3?sig=" + String(repeating: "0123456789abcdef", count: 40)
        }
    /// Keys only ever written pinned and never removed: once acknowledged,
    /// they must survive every crash.
    static let pinnedKeys: [String] = (0..<6).map { "p\($0)" }
    static let allKeys = regularKeys + pinnedKeys
}

/// The bytes of a value: byte `p` of content `id` depends only on
/// `(id, p)`, so values of one id with different lengths share their
/// prefix (and so their leading chunks), and the checker can recompute
/// any range of any value written. The id picks one of four styles.
enum Content {
    static func bytes(id: UInt64, length: Int) -> [UInt8] {
        bytes(id: id, range: 0..<length)
    }

    static func bytes(id: UInt64, range: Range<Int>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: range.count)
        out.withUnsafeMutableBytes { fill($0, id: id, range: range) }
        return out
    }

    private static let letters = Array("abcdefghijklmnop".utf8)
    private static let id3 = Array("ID3\u{4}".utf8)

    /// Eight bytes of position `8 * index` onwards, little-endian.
    @inline(__always)
    private static func word(_ id: UInt64, style: UInt64, _ index: Int) -> UInt64 {
        switch style {
        case 1:  // text-like, one 8-letter pattern per 64 bytes: zstd compresses it well
            let pattern = SplitMix64.mix(id ^ UInt64(index / 8))
            var word: UInt64 = 0
            for byte in 0..<8 { word |= UInt64(letters[Int((pattern >> UInt64(4 * byte)) & 15)]) << UInt64(8 * byte) }
            return word
        default:  // incompressible (style 0 stays so; 2 gets an MP3 header; 3 is mostly zeroed)
            return SplitMix64.mix(id &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
        }
    }

    private static func fill(_ out: UnsafeMutableRawBufferPointer, id: UInt64, range: Range<Int>) {
        let style = id % 4
        var position = range.lowerBound
        while position < range.upperBound {
            let index = position >> 3
            let value = word(id, style: style, index)
            let end = min(range.upperBound, (index + 1) * 8)
            if position & 7 == 0 && end - position == 8 {
                out.storeBytes(of: value.littleEndian, toByteOffset: position - range.lowerBound, as: UInt64.self)
            } else {
                for p in position..<end {
                    out[p - range.lowerBound] = UInt8(truncatingIfNeeded: value >> UInt64(8 * (p & 7)))
                }
            }
            position = end
        }
        switch style {
        case 2:  // starts like an MP3 file: compression is skipped
            for p in range.clamped(to: 0..<id3.count) { out[p - range.lowerBound] = id3[p] }
        case 3:  // mostly zeros: keep one byte in 97
            for p in range where p % 97 != 0 { out[p - range.lowerBound] = 0 }
        default:
            break
        }
    }
}
