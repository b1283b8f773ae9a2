/// Reads what ``ByteWriter`` wrote, failing (not trapping) on short or
/// malformed input.
struct ByteReader {
    private let buffer: UnsafeRawBufferPointer
    private(set) var offset = 0

    /// Thrown when the bytes end early or a length is out of range.
    struct Malformed: Error {}

    init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    var remaining: Int { buffer.count - offset }

    mutating func readByte() throws(Malformed) -> UInt8 {
        guard remaining >= 1 else { throw Malformed() }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func read<T: FixedWidthInteger>(littleEndian type: T.Type) throws(Malformed) -> T {
        T(littleEndian: try readStoredBytes(of: type))
    }

    mutating func read<T: FixedWidthInteger>(bigEndian type: T.Type) throws(Malformed) -> T {
        T(bigEndian: try readStoredBytes(of: type))
    }

    /// The next `MemoryLayout<T>.size` bytes as they are stored.
    private mutating func readStoredBytes<T: FixedWidthInteger>(of type: T.Type) throws(Malformed) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Malformed() }
        var value = T.zero
        withUnsafeMutableBytes(of: &value) {
            $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + size]))
        }
        offset += size
        return value
    }

    mutating func readDouble() throws(Malformed) -> Double {
        Double(bitPattern: try read(littleEndian: UInt64.self))
    }

    mutating func readVarint() throws(Malformed) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try readByte()
            guard shift < 64 else { throw Malformed() }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    mutating func readRaw(count: Int) throws(Malformed) -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Malformed() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + count])
    }

    mutating func readBytes() throws(Malformed) -> UnsafeRawBufferPointer {
        let count = try readVarint()
        guard count <= UInt64(remaining) else { throw Malformed() }
        return try readRaw(count: Int(count))
    }

    mutating func readString() throws(Malformed) -> String {
        String(decoding: try readBytes(), as: UTF8.self)
    }

    mutating func readOptionalString() throws(Malformed) -> String? {
        let marker = try readVarint()
        guard marker > 0 else { return nil }
        guard marker - 1 <= UInt64(remaining) else { throw Malformed() }
        return String(decoding: try readRaw(count: Int(marker - 1)), as: UTF8.self)
    }
}
