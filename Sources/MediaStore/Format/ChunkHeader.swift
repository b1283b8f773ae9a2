/// The 12-byte header in front of a stored chunk's bytes:
/// magic `0xC4`, codec, 2 reserved bytes, raw length, stored length (LE).
struct ChunkHeader: Equatable {
    enum Codec: UInt8 {
        case raw = 0
        case zstd = 1
    }

    static let size = 12
    static let magic: UInt8 = 0xC4

    var codec: Codec
    var rawLength: Int
    var storedLength: Int

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        buffer[0] = Self.magic
        buffer[1] = codec.rawValue
        buffer[2] = 0
        buffer[3] = 0
        buffer.storeBytes(of: UInt32(rawLength).littleEndian, toByteOffset: 4, as: UInt32.self)
        buffer.storeBytes(of: UInt32(storedLength).littleEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// Decodes and checks the header against the value's size.
    static func decode(_ value: UnsafeRawBufferPointer) -> ChunkHeader? {
        guard value.count >= size, value[0] == magic, let codec = Codec(rawValue: value[1]) else { return nil }
        let raw = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let stored = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        guard stored == value.count - size else { return nil }
        if codec == .raw && raw != stored { return nil }
        return ChunkHeader(codec: codec, rawLength: raw, storedLength: stored)
    }
}
