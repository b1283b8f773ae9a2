/// Byte layouts of the keys of the store's databases.
///
/// A *slot* is 16 bytes of XXH3-128 (of the cache key, or of a chunk's
/// bytes) followed by a 2-byte big-endian ordinal. Different values whose
/// digests collide get different ordinals; the full cache key or the
/// chunk bytes are compared to tell them apart, so they never alias.
enum StoreKeys {
    static let slotSize = 18

    static func slot(_ digest: ContentDigest, ordinal: UInt16) -> [UInt8] {
        var bytes = digest.canonicalBytes
        bytes.append(UInt8(ordinal >> 8))
        bytes.append(UInt8(ordinal & 0xFF))
        return bytes
    }

    static func ordinal(ofSlot slot: [UInt8]) -> UInt16 {
        UInt16(slot[16]) << 8 | UInt16(slot[17])
    }

    /// `extents`: entry id (8 B BE) + chunk index (4 B BE).
    static func extent(entryID: UInt64, index: Int) -> [UInt8] {
        var writer = ByteWriter(capacity: 12)
        writer.write(bigEndian: entryID)
        writer.write(bigEndian: UInt32(index))
        return writer.bytes
    }

    static func entryID(_ value: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(bigEndian: value)
        return writer.bytes
    }

    /// `lru`: access tick (8 B BE) + slot.
    static func lru(tick: UInt64, slot: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 26)
        writer.write(bigEndian: tick)
        writer.write(raw: slot)
        return writer.bytes
    }

    /// `expiry`: milliseconds since 1970 (8 B BE, clamped at 0) + slot.
    static func expiry(milliseconds: UInt64, slot: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: 26)
        writer.write(bigEndian: milliseconds)
        writer.write(raw: slot)
        return writer.bytes
    }

    static func bigEndianUInt64(_ bytes: [UInt8], at offset: Int = 0) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
