import Foundation

/// The MD5 digest of `input`'s UTF-8 bytes as uppercase hex, as
/// hyperoslo/Cache's helper returns it. Not used for storage; kept for
/// source compatibility.
public func MD5(_ input: String) -> String {
    var md5 = MD5Digest()
    md5.update(Array(input.utf8))
    return md5.finalize().map { String(format: "%02X", $0) }.joined()
}

/// A small MD5 (RFC 1321) implementation.
struct MD5Digest {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
    private var buffer: [UInt8] = []
    private var length: UInt64 = 0

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]
    private static let constants: [UInt32] = (0..<64).map {
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296))
    }

    mutating func update(_ bytes: [UInt8]) {
        length &+= UInt64(bytes.count)
        buffer.append(contentsOf: bytes)
        var offset = 0
        while buffer.count - offset >= 64 {
            process(buffer[offset..<offset + 64])
            offset += 64
        }
        buffer.removeFirst(offset)
    }

    mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var padding: [UInt8] = [0x80]
        let remainder = (buffer.count + 1) % 64
        padding += [UInt8](repeating: 0, count: remainder <= 56 ? 56 - remainder : 120 - remainder)
        padding += (0..<8).map { UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64($0))) }
        buffer.append(contentsOf: padding)
        var offset = 0
        while offset < buffer.count {
            process(buffer[offset..<offset + 64])
            offset += 64
        }
        buffer = []
        return [state.0, state.1, state.2, state.3].flatMap { word in
            (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) }
        }
    }

    private mutating func process(_ block: ArraySlice<UInt8>) {
        let base = block.startIndex
        let words: [UInt32] = (0..<16).map { index in
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(block[base + index * 4 + $1]) << (8 * UInt32($1)) }
        }
        var (a, b, c, d) = state
        for index in 0..<64 {
            var f: UInt32
            let g: Int
            switch index {
            case 0..<16: (f, g) = ((b & c) | (~b & d), index)
            case 16..<32: (f, g) = ((d & b) | (~d & c), (5 * index + 1) % 16)
            case 32..<48: (f, g) = (b ^ c ^ d, (3 * index + 5) % 16)
            default: (f, g) = (c ^ (b | ~d), (7 * index) % 16)
            }
            f = f &+ a &+ Self.constants[index] &+ words[g]
            a = d
            d = c
            c = b
            let shift = Self.shifts[index]
            b = b &+ ((f << shift) | (f >> (32 - shift)))
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
