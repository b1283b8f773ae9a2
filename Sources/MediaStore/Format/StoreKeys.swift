/// Byte layouts of the keys of the store's databases (the slots of
/// `keys`, `access`, `chunks` and `refs` are ``Slot``s).
enum StoreKeys {
    /// `extents`: entry id (8 B BE) + chunk index (4 B BE).
    static let extentKeySize = 12
    /// `lru` and `expiry`: an order (8 B BE) + the entry's slot.
    static let orderedSlotKeySize = 8 + Slot.size

    static func extent(entryID: UInt64, index: Int) -> [UInt8] {
        var writer = ByteWriter(capacity: extentKeySize)
        writer.write(bigEndian: entryID)
        writer.write(bigEndian: UInt32(index))
        return writer.bytes
    }

    /// The chunk index of an `extents` key; `nil` when it is not one.
    static func extentIndex(ofKey key: [UInt8]) -> Int? {
        guard key.count == extentKeySize else { return nil }
        return Int(key[8]) << 24 | Int(key[9]) << 16 | Int(key[10]) << 8 | Int(key[11])
    }

    /// `staging`, and the prefix of an entry's `extents` keys: entry id (8 B BE).
    static func entryID(_ value: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 8)
        writer.write(bigEndian: value)
        return writer.bytes
    }

    /// `packs` and `packUse`: pack id (8 B BE).
    static func pack(_ id: UInt64) -> [UInt8] {
        entryID(id)
    }

    /// `lru`: access tick (8 B BE) + slot.
    static func lru(tick: UInt64, slot: Slot) -> [UInt8] {
        orderedSlot(tick, slot)
    }

    /// `expiry`: milliseconds since 1970 (8 B BE, clamped at 0) + slot.
    static func expiry(milliseconds: UInt64, slot: Slot) -> [UInt8] {
        orderedSlot(milliseconds, slot)
    }

    private static func orderedSlot(_ order: UInt64, _ slot: Slot) -> [UInt8] {
        var writer = ByteWriter(capacity: orderedSlotKeySize)
        writer.write(bigEndian: order)
        slot.withUnsafeBytes { writer.write(raw: $0) }
        return writer.bytes
    }

    /// The order (tick or milliseconds) and slot of an `lru` or `expiry`
    /// key; `nil` when it is not one.
    static func orderedSlot(ofKey key: [UInt8]) -> (order: UInt64, slot: Slot)? {
        guard key.count == orderedSlotKeySize, let slot = Slot(key[8...]) else { return nil }
        return (bigEndianUInt64(key), slot)
    }

    static func bigEndianUInt64(_ bytes: [UInt8], at offset: Int = 0) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<offset + 8 { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
