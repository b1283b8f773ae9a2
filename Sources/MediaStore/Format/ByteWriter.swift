/// Appends little-endian integers, varints and strings to a byte array.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ value: UInt8) { bytes.append(value) }

    mutating func write<T: FixedWidthInteger>(littleEndian value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write<T: FixedWidthInteger>(bigEndian value: T) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: Double) { write(littleEndian: value.bitPattern) }

    mutating func writeVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func write(bytes other: some Collection<UInt8>) {
        writeVarint(UInt64(other.count))
        bytes.append(contentsOf: other)
    }

    mutating func write(raw other: some Collection<UInt8>) {
        bytes.append(contentsOf: other)
    }

    mutating func write(_ string: String) {
        write(bytes: Array(string.utf8))
    }

    /// Writes `nil` as 0, otherwise the length + 1 and the bytes.
    mutating func write(optional string: String?) {
        guard let string else { return writeVarint(0) }
        let utf8 = Array(string.utf8)
        writeVarint(UInt64(utf8.count) + 1)
        bytes.append(contentsOf: utf8)
    }
}
