import Foundation

/// A 128-bit digest in canonical (big-endian) byte order: XXH3-128 of
/// the bytes (`ContentDigest+XXH3.swift`; its ``hexString`` is what
/// `xxh128sum` prints for the same bytes), or, in an encrypted store, a
/// keyed identity: HMAC-SHA256 truncated to 128 bits
/// (`StoreEncryption`).
public struct ContentDigest: Hashable, Sendable, CustomStringConvertible {
    /// The high 64 bits.
    public let high: UInt64
    /// The low 64 bits.
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Reads 16 canonical bytes.
    package init?(canonical bytes: some Collection<UInt8>) {
        guard bytes.count >= 16 else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, byte) in bytes.prefix(16).enumerated() {
            if index < 8 { high = high << 8 | UInt64(byte) } else { low = low << 8 | UInt64(byte) }
        }
        self.init(high: high, low: low)
    }

    /// Reads the first 16 canonical bytes of `buffer`, as two big-endian
    /// words (the same digest as from any other collection of them).
    package init?(canonical buffer: UnsafeRawBufferPointer) {
        guard buffer.count >= 16 else { return nil }
        self.init(
            high: UInt64(bigEndian: buffer.loadUnaligned(as: UInt64.self)),
            low: UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// The 16 canonical bytes.
    package var canonicalBytes: [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: high >> (56 - 8 * UInt64(index)))
            bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (56 - 8 * UInt64(index)))
        }
        return bytes
    }

    /// 32 lowercase hex digits, as `xxh128sum` prints.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(32)
        for byte in canonicalBytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hexString }
}
