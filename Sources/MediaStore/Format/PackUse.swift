/// The value of a `packUse` row: how much of a pack is still referenced.
/// Kept apart from the pack so that removing one value rewrites 12 bytes,
/// not the whole pack. Layout: live values, live bytes, payload bytes
/// (UInt32 LE each).
package struct PackUse: Equatable {
    static let size = 12

    var liveCount: Int
    var liveBytes: Int
    var payloadBytes: Int

    init(liveCount: Int, liveBytes: Int, payloadBytes: Int) {
        self.liveCount = liveCount
        self.liveBytes = liveBytes
        self.payloadBytes = payloadBytes
    }

    /// Decodes a row; `nil` when it has the wrong size or is inconsistent.
    package init?(_ value: UnsafeRawBufferPointer) {
        guard value.count == Self.size else { return nil }
        liveCount = Int(UInt32(littleEndian: value.loadUnaligned(as: UInt32.self)))
        liveBytes = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        payloadBytes = Int(UInt32(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        guard liveBytes <= payloadBytes else { return nil }
    }

    /// Whether less than half of the payload is still referenced: the
    /// pack's live values are then moved to a new pack and it is deleted.
    var wantsCompaction: Bool { liveCount > 0 && liveBytes * 2 < payloadBytes }

    package func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(littleEndian: UInt32(liveCount))
        writer.write(littleEndian: UInt32(liveBytes))
        writer.write(littleEndian: UInt32(payloadBytes))
        return writer.bytes
    }
}
