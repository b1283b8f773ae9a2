/// The value of a `packs` row (store format 4): several small whole
/// values in one row, so that a million 1 KiB values fill whole pages
/// instead of one LMDB leaf page per two or three records.
///
/// Layout: magic `0xC5`, layout version 1, 2 reserved zero bytes, the
/// number of values (UInt32 LE); the payload, the values one after
/// another; then one directory entry per value — the owner's ``Slot`` in
/// `keys` (18 B), the value's offset in the row and its length (UInt32 LE
/// each). A record names its value by pack id and offset in the row, so a
/// read touches only the page(s) of its value, not the header; the
/// directory is for compaction and ``MediaStore/verify()``. A value's
/// integrity is its record's content digest, checked on every read.
package struct PackLayout {
    static let magic: UInt8 = 0xC5
    static let version: UInt8 = 1
    static let headerSize = 8
    static let directoryEntrySize = Slot.size + 8

    /// One value of a pack: whose it is and where its bytes are.
    package struct Entry: Equatable {
        var owner: Slot
        package var offset: Int
        package var length: Int
    }

    /// The size of a pack row holding `count` values of `payload` bytes.
    static func size(count: Int, payload: Int) -> Int {
        headerSize + count * directoryEntrySize + payload
    }

    /// Writes a pack of `entries` over `payload` (whose first byte is at
    /// ``headerSize`` of the row) into `out`, which has exactly
    /// ``size(count:payload:)`` bytes.
    static func write(entries: [Entry], payload: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) {
        out[0] = magic
        out[1] = version
        out[2] = 0
        out[3] = 0
        out.storeBytes(of: UInt32(entries.count).littleEndian, toByteOffset: 4, as: UInt32.self)
        if payload.count > 0 {
            UnsafeMutableRawBufferPointer(rebasing: out[headerSize..<(headerSize + payload.count)])
                .copyMemory(from: payload)
        }
        var position = headerSize + payload.count
        for entry in entries {
            entry.owner.withUnsafeBytes { slot in
                UnsafeMutableRawBufferPointer(rebasing: out[position..<(position + Slot.size)]).copyMemory(from: slot)
            }
            out.storeBytes(of: UInt32(entry.offset).littleEndian, toByteOffset: position + Slot.size, as: UInt32.self)
            out.storeBytes(
                of: UInt32(entry.length).littleEndian, toByteOffset: position + Slot.size + 4, as: UInt32.self)
            position += directoryEntrySize
        }
    }

    /// The `length` bytes at `offset` of a pack row; `nil` when the range
    /// is outside the row's payload area. The header is not read (it is
    /// usually on another page): the record's digest checks the bytes.
    package static func value(in row: UnsafeRawBufferPointer, offset: Int, length: Int) -> UnsafeRawBufferPointer? {
        guard offset >= headerSize, length >= 0, offset <= row.count - length else { return nil }
        return UnsafeRawBufferPointer(rebasing: row[offset..<(offset + length)])
    }

    /// The directory of a pack row; `nil` when the row is not a pack or an
    /// entry points outside the payload.
    package static func entries(of row: UnsafeRawBufferPointer) -> [Entry]? {
        guard let count = count(of: row) else { return nil }
        let payloadEnd = row.count - count * directoryEntrySize
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var position = payloadEnd
        for _ in 0..<count {
            guard let owner = Slot(row[position..<(position + Slot.size)]) else { return nil }
            let offset = Int(
                UInt32(littleEndian: row.loadUnaligned(fromByteOffset: position + Slot.size, as: UInt32.self)))
            let length = Int(
                UInt32(littleEndian: row.loadUnaligned(fromByteOffset: position + Slot.size + 4, as: UInt32.self)))
            guard offset >= headerSize, offset <= payloadEnd - length else { return nil }
            entries.append(Entry(owner: owner, offset: offset, length: length))
            position += directoryEntrySize
        }
        return entries
    }

    /// The value count of a checked header; `nil` when the row is not a pack.
    private static func count(of row: UnsafeRawBufferPointer) -> Int? {
        guard row.count >= headerSize, row[0] == magic, row[1] == version, row[2] == 0, row[3] == 0 else {
            return nil
        }
        let count = Int(UInt32(littleEndian: row.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        guard count <= (row.count - headerSize) / directoryEntrySize else { return nil }
        return count
    }
}
