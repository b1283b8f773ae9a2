import Foundation

/// Content whose every byte says what it is: any slice of at least 31
/// bytes names its key and its content, and every byte of it can be
/// checked against that content at its offset. Two contents differ at
/// nearly every offset, so a slice that mixes them is caught wherever the
/// seam falls.
///
/// Each aligned 16-byte block holds the content id (4 bytes), the key id
/// (2), the block index (2, low bits) and a hash of all three (8).
enum SelfDescribingBytes {
    static let blockSize = 16
    /// The shortest slice that always holds a whole block.
    static let decodableLength = 2 * blockSize - 1

    /// A content id that carries its content's length (low 24 bits), so a
    /// whole read can be checked for length too; `variant` tells apart
    /// contents of one length.
    static func contentID(variant: UInt8, length: Int) -> UInt32 {
        precondition(length >= 0 && length < 1 << 24, "length \(length) does not fit a content id")
        return UInt32(variant) << 24 | UInt32(length)
    }

    /// The length of the content `id` names.
    static func length(of id: UInt32) -> Int { Int(id & 0xFF_FFFF) }

    /// The whole content `id` of key `key`.
    static func content(key: UInt16, id: UInt32) -> [UInt8] {
        bytes(key: key, id: id, range: 0..<length(of: id))
    }

    /// Bytes `range` of content `id` of key `key`.
    static func bytes(key: UInt16, id: UInt32, range: Range<Int>) -> [UInt8] {
        // Whole blocks covering the range, eight bytes at a time, then cut.
        let first = range.lowerBound / blockSize
        let blocks = (range.upperBound + blockSize - 1) / blockSize - first
        var words = [UInt64](repeating: 0, count: 2 * blocks)
        for block in first..<(first + blocks) {
            let header = UInt64(id) | UInt64(key) << 32 | UInt64(UInt16(truncatingIfNeeded: block)) << 48
            words[2 * (block - first)] = header.littleEndian
            words[2 * (block - first) + 1] = mix(header ^ mix(UInt64(block))).littleEndian
        }
        let skip = range.lowerBound - first * blockSize
        return words.withUnsafeBytes { Array($0[skip..<(skip + range.count)]) }
    }

    /// What a slice read at `offset` turned out to be.
    enum Verdict: Equatable, CustomStringConvertible {
        /// Every byte is content `id` of the key, at its offset.
        case content(UInt32)
        /// Too short to name its content (shorter than ``decodableLength``).
        case undecidable
        /// Not (only) one content of the key: what is wrong, where.
        case wrong(String)

        var description: String {
            switch self {
            case .content(let id): "content \(id)"
            case .undecidable: "undecidable"
            case .wrong(let reason): reason
            }
        }
    }

    /// Decodes `data`, read at `offset` from key `key`'s entry.
    static func decode(_ data: some Collection<UInt8>, at offset: Int, key: UInt16) -> Verdict {
        let bytes = Array(data)
        let firstBlock = (offset + blockSize - 1) / blockSize * blockSize
        guard firstBlock + blockSize <= offset + bytes.count else { return .undecidable }
        let id = word(bytes, at: firstBlock - offset, count: 4)
        let keyFound = UInt16(word(bytes, at: firstBlock - offset + 4, count: 2))
        guard keyFound == key else { return .wrong("bytes at \(firstBlock) are of key \(keyFound), not \(key)") }
        guard offset + bytes.count <= length(of: id) else {
            return .wrong(
                "\(bytes.count) bytes at \(offset) run past the end of content \(id) (length \(length(of: id)))")
        }
        let expected = self.bytes(key: key, id: id, range: offset..<(offset + bytes.count))
        guard let mismatch = bytes.indices.first(where: { bytes[$0] != expected[$0] }) else { return .content(id) }
        // Name what lies at the first wrong byte, when its block is whole.
        let block = (offset + mismatch) / blockSize * blockSize
        var other = "unrecognisable bytes"
        if block >= offset, block + blockSize <= offset + bytes.count {
            other = "content \(word(bytes, at: block - offset, count: 4))"
        }
        return .wrong("a read of content \(id) at \(offset) holds \(other) from byte \(offset + mismatch)")
    }

    private static func word(_ bytes: [UInt8], at index: Int, count: Int) -> UInt32 {
        (0..<count).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << (8 * UInt32($1)) }
    }

    /// SplitMix64's finaliser.
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
