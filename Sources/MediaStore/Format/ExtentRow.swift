/// The value of an `extents` row: which chunk holds one chunk-sized piece
/// of an entry. Layout: the chunk's ``Slot`` (18 B), then the piece's
/// raw length (4 B little-endian). The row's key is
/// ``StoreKeys/extent(entryID:index:)``.
struct ExtentRow: Equatable {
    static let size = Slot.size + 4

    /// The chunk holding the bytes.
    var chunk: Slot
    /// The raw (uncompressed) length of the piece.
    var length: Int

    init(chunk: Slot, length: Int) {
        self.chunk = chunk
        self.length = length
    }

    /// Decodes a row; `nil` when the value has the wrong size.
    init?(_ value: UnsafeRawBufferPointer) {
        guard let length = Self.length(in: value), let chunk = Slot(value.prefix(Slot.size)) else { return nil }
        self.init(chunk: chunk, length: length)
    }

    /// Only the length of a stored row (no copy of the slot); `nil` when
    /// the value has the wrong size.
    static func length(in value: UnsafeRawBufferPointer) -> Int? {
        guard value.count == size else { return nil }
        return Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: Slot.size, as: UInt32.self)))
    }

    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(raw: chunk.bytes)
        writer.write(littleEndian: UInt32(length))
        return writer.bytes
    }
}
