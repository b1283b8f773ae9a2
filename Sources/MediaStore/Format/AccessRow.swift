/// The value of an `access` row: an entry's current access tick and
/// time, kept apart from its record so that a batch of reads moves these
/// rows instead of rewriting records. Layout: tick (8 B little-endian),
/// then seconds since 1970 (a `Double`'s bits, 8 B little-endian).
struct AccessRow: Equatable {
    static let size = 16

    var tick: UInt64
    var time: Double

    init(tick: UInt64, time: Double) {
        self.tick = tick
        self.time = time
    }

    /// Decodes a row; `nil` when the value has the wrong size.
    init?(_ value: UnsafeRawBufferPointer) {
        guard value.count == Self.size else { return nil }
        tick = UInt64(littleEndian: value.loadUnaligned(as: UInt64.self))
        time = Double(bitPattern: UInt64(littleEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: Self.size)
        writer.write(littleEndian: tick)
        writer.write(time)
        return writer.bytes
    }
}
