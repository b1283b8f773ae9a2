/// The value of a `chunks` row: a ``ChunkHeader`` followed by the stored
/// bytes (raw, or zstd-compressed). A view of the value in place; valid
/// only as long as the buffer it was read from.
struct ChunkValue {
    let header: ChunkHeader
    /// The stored bytes after the header (`header.storedLength` of them).
    let payload: UnsafeRawBufferPointer

    /// Checks the header against the value; `nil` when it does not fit.
    init?(_ value: UnsafeRawBufferPointer) {
        guard let header = ChunkHeader.decode(value) else { return nil }
        self.header = header
        self.payload = UnsafeRawBufferPointer(rebasing: value[ChunkHeader.size...])
    }

    /// The size of the value holding `storedLength` stored bytes.
    static func size(storedLength: Int) -> Int {
        ChunkHeader.size + storedLength
    }

    /// Writes the header and `payload` into `out`, which has exactly
    /// ``size(storedLength:)`` bytes.
    static func write(_ header: ChunkHeader, payload: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        header.encode(into: out)
        UnsafeMutableRawBufferPointer(rebasing: out[ChunkHeader.size...]).copyMemory(from: payload)
    }
}
