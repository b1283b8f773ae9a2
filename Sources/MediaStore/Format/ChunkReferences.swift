/// The value of a `refs` row: how many extent rows point at a chunk
/// (4 B little-endian). Kept apart from the chunk so that sharing it does
/// not rewrite its bytes.
struct ChunkReferences: Equatable {
    static let size = 4

    var count: Int

    init(count: Int) {
        self.count = count
    }

    /// Decodes a row; a missing or malformed row counts as no reference.
    init(_ value: UnsafeRawBufferPointer?) {
        guard let value, value.count == Self.size else {
            self.count = 0
            return
        }
        count = Int(UInt32(littleEndian: value.loadUnaligned(as: UInt32.self)))
    }

    /// The stored form, clamped to 0...UInt32.max.
    func encode() -> [UInt8] {
        let stored = UInt32(clamping: max(0, count))
        return withUnsafeBytes(of: stored.littleEndian) { Array($0) }
    }
}
