/// The 12-byte header in front of a stored chunk's bytes:
/// magic `0xC4`, codec, block shift, 1 reserved byte, raw length, stored
/// length (LE).
///
/// An encrypted store's chunks, and only its, are ``Codec/sealed``: the
/// stored bytes are the chunk sealed by ``ChunkSealer`` (the raw length is
/// the plaintext's), whose block tags do the digest table's job.
///
/// The block shift is 0 for a chunk without a ``BlockDigests`` table (every
/// chunk of store formats 1 and 2, compressed chunks, chunks of at most one
/// block); otherwise `log2` of the block size of the table that follows the
/// header (format 3).
struct ChunkHeader: Equatable {
    enum Codec: UInt8 {
        case raw = 0
        case zstd = 1
        /// Sealed in 16 KiB blocks by ``ChunkSealer`` (encrypted stores only).
        case sealed = 2
    }

    static let size = 12
    static let magic: UInt8 = 0xC4

    var codec: Codec
    var rawLength: Int
    var storedLength: Int
    /// `log2` of the block size of the chunk's digest table; 0 for none.
    var blockShift: Int = 0

    /// The size of the digest table after the header.
    var tableSize: Int {
        blockShift == 0 ? 0 : BlockDigests.size(rawLength: rawLength, shift: blockShift)
    }

    func encode(into buffer: UnsafeMutableRawBufferPointer) {
        buffer[0] = Self.magic
        buffer[1] = codec.rawValue
        buffer[2] = UInt8(blockShift)
        buffer[3] = 0
        buffer.storeBytes(of: UInt32(rawLength).littleEndian, toByteOffset: 4, as: UInt32.self)
        buffer.storeBytes(of: UInt32(storedLength).littleEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// Decodes and checks the header against the value's size.
    static func decode(_ value: UnsafeRawBufferPointer) -> ChunkHeader? {
        guard value.count >= size, value[0] == magic, let codec = Codec(rawValue: value[1]) else { return nil }
        let raw = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let stored = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let shift = Int(value[2])
        if shift != 0 {
            // Only raw chunks of more than one block carry a table.
            guard codec == .raw, (BlockDigests.minimumShift...BlockDigests.maximumShift).contains(shift),
                BlockDigests.count(rawLength: raw, shift: shift) > 1,
                BlockDigests.count(rawLength: raw, shift: shift) <= BlockDigests.maximumCount
            else { return nil }
        }
        let header = ChunkHeader(codec: codec, rawLength: raw, storedLength: stored, blockShift: shift)
        guard value[3] == 0, stored == value.count - size - header.tableSize else { return nil }
        if codec == .raw && raw != stored { return nil }
        if codec == .sealed
            && (raw > ChunkSealer.maximumPlaintextCount || stored != ChunkSealer.sealedCount(plaintextCount: raw))
        {
            return nil
        }
        return header
    }
}
