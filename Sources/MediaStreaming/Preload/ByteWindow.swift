/// Bounds-checked big-endian reads over a byte buffer that may end before
/// the file does: every read past the end returns `nil`, never traps.
struct ByteWindow {
    let bytes: [UInt8]
    /// Where `bytes[0]` sits in the file.
    let base: Int

    init(_ bytes: [UInt8], base: Int = 0) {
        self.bytes = bytes
        self.base = base
    }

    /// The file offset one past the last byte held.
    var end: Int { base + bytes.count }

    func contains(_ range: Range<Int>) -> Bool { range.lowerBound >= base && range.upperBound <= end }

    func byte(at offset: Int) -> UInt8? {
        let index = offset - base
        return index >= 0 && index < bytes.count ? bytes[index] : nil
    }

    /// The `count`-byte big-endian unsigned integer at `offset` (count ≤ 8).
    func integer(at offset: Int, count: Int) -> UInt64? {
        guard count <= 8, contains(offset..<offset + count) else { return nil }
        var value: UInt64 = 0
        for index in offset - base..<offset - base + count { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    func uint16(at offset: Int) -> Int? { integer(at: offset, count: 2).map(Int.init) }
    func uint24(at offset: Int) -> Int? { integer(at: offset, count: 3).map(Int.init) }
    func uint32(at offset: Int) -> Int? { integer(at: offset, count: 4).map(Int.init) }
    func uint64(at offset: Int) -> UInt64? { integer(at: offset, count: 8) }

    /// Whether the bytes at `offset` are `ascii`'s.
    func matches(_ ascii: String, at offset: Int) -> Bool {
        let expected = Array(ascii.utf8)
        guard contains(offset..<offset + expected.count) else { return false }
        return bytes[offset - base..<offset - base + expected.count].elementsEqual(expected)
    }
}
