/// The value of a `chunks` row: a ``ChunkHeader``, the chunk's
/// ``BlockDigests`` table when the header announces one, then the stored
/// bytes (raw, or zstd-compressed). A view of the value in place; valid
/// only as long as the buffer it was read from.
struct ChunkValue {
    let header: ChunkHeader
    /// The per-block digests of a raw chunk of format 3; `nil` for none.
    let blocks: BlockDigests?
    /// The stored bytes after the header and table (`header.storedLength` of them).
    let payload: UnsafeRawBufferPointer

    /// Checks the header against the value; `nil` when it does not fit.
    init?(_ value: UnsafeRawBufferPointer) {
        guard let header = ChunkHeader.decode(value) else { return nil }
        self.header = header
        let afterHeader = UnsafeRawBufferPointer(rebasing: value[ChunkHeader.size...])
        if header.blockShift != 0 {
            guard let blocks = BlockDigests(shift: header.blockShift, rawLength: header.rawLength, in: afterHeader)
            else { return nil }
            self.blocks = blocks
        } else {
            self.blocks = nil
        }
        self.payload = UnsafeRawBufferPointer(rebasing: afterHeader[header.tableSize...])
    }

    /// The header for `payload`, stored with `codec`: a raw chunk of more
    /// than one block gets a digest table.
    static func header(codec: ChunkHeader.Codec, rawLength: Int, storedLength: Int) -> ChunkHeader {
        let table = codec == .raw && BlockDigests.applies(rawLength: rawLength)
        return ChunkHeader(
            codec: codec, rawLength: rawLength, storedLength: storedLength,
            blockShift: table ? BlockDigests.shift(rawLength: rawLength) : 0)
    }

    /// The size of the value for `header`.
    static func size(_ header: ChunkHeader) -> Int {
        ChunkHeader.size + header.tableSize + header.storedLength
    }

    /// The size of a value holding `storedLength` stored bytes and no table.
    static func size(storedLength: Int) -> Int {
        ChunkHeader.size + storedLength
    }

    /// Writes the header, the digest table the header announces (computed
    /// from `payload`, which is then the raw bytes) and `payload` into
    /// `out`, which has exactly ``size(_:)`` bytes.
    static func write(_ header: ChunkHeader, payload: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        header.encode(into: out)
        let table = header.tableSize
        if header.blockShift != 0 {
            BlockDigests.write(
                of: payload, shift: header.blockShift,
                into: UnsafeMutableRawBufferPointer(rebasing: out[ChunkHeader.size..<(ChunkHeader.size + table)]))
        }
        UnsafeMutableRawBufferPointer(rebasing: out[(ChunkHeader.size + table)...]).copyMemory(from: payload)
    }
}
