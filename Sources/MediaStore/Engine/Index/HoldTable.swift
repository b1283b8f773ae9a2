import Foundation

/// Who holds which entry (store format 5): `holds` (entry slot ‖ holder →
/// nothing) and its mirror `heldBy` (holder ‖ 0 ‖ entry slot → nothing),
/// so both "who holds this entry" and "what does this holder hold" are one
/// range scan. An entry's record carries the pinned flag exactly while it
/// has at least one row here; eviction and expiry read only the flag.
///
/// A store of format 4 or older opened read-only has neither database:
/// its pinned flag stands for the ``MediaStore/appHolder``.
struct HoldTable {
    let txn: LMDBTransaction
    let db: StoreDatabases

    /// The longest holder name, in UTF-8 bytes.
    static let maxHolderBytes = 200

    /// `holder`'s bytes, or nil when it is empty, too long, or holds a NUL or another control character.
    static func validated(_ holder: String) -> [UInt8]? {
        let bytes = Array(holder.utf8)
        guard !bytes.isEmpty, bytes.count <= maxHolderBytes,
            !holder.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return nil }
        return bytes
    }

    /// Adds a row; whether it was new.
    func add(_ holder: [UInt8], to slot: Slot) throws -> Bool {
        guard let holds = db.holds, let heldBy = db.heldBy else { throw StoreError.readOnly }
        let key = slot.bytes + holder
        guard try txn.value(holds, key: key) == nil else { return false }
        try txn.put(holds, key: key, value: [UInt8]())
        try txn.put(heldBy, key: holder + [0] + slot.bytes, value: [UInt8]())
        return true
    }

    /// Removes a row; whether there was one.
    func remove(_ holder: [UInt8], from slot: Slot) throws -> Bool {
        guard let holds = db.holds, let heldBy = db.heldBy else { throw StoreError.readOnly }
        guard try txn.delete(holds, key: slot.bytes + holder) else { return false }
        _ = try txn.delete(heldBy, key: holder + [0] + slot.bytes)
        return true
    }

    /// The holders of the entry at `slot`, in byte order.
    func holders(of slot: Slot) throws -> [[UInt8]] {
        guard let holds = db.holds else { return [] }
        let prefix = slot.bytes
        let cursor = try txn.cursor(holds)
        var result: [[UInt8]] = []
        var key = try cursor.seekKey(atLeast: prefix)
        while let current = key, current.count > prefix.count, current.starts(with: prefix) {
            result.append(Array(current.dropFirst(prefix.count)))
            key = try cursor.nextKey()
        }
        return result
    }

    /// The slots `holder` holds.
    func slots(heldBy holder: [UInt8]) throws -> [Slot] {
        guard let heldBy = db.heldBy else { return [] }
        let prefix = holder + [0]
        let cursor = try txn.cursor(heldBy)
        var result: [Slot] = []
        var key = try cursor.seekKey(atLeast: prefix)
        while let current = key, current.starts(with: prefix) {
            if let slot = Slot(current.dropFirst(prefix.count)) { result.append(slot) }
            key = try cursor.nextKey()
        }
        return result
    }

    /// Removes every row of the entry at `slot` (the entry goes).
    func removeAll(of slot: Slot) throws {
        for holder in try holders(of: slot) { _ = try remove(holder, from: slot) }
    }

    /// Every row of `holds`, for verification: (slot, holder).
    func allRows() throws -> [(slot: Slot?, holder: [UInt8])] {
        guard let holds = db.holds else { return [] }
        let cursor = try txn.cursor(holds)
        var result: [(slot: Slot?, holder: [UInt8])] = []
        var key = try cursor.firstKey()
        while let current = key {
            result.append((Slot(current.prefix(Slot.size)), Array(current.dropFirst(Slot.size))))
            key = try cursor.nextKey()
        }
        return result
    }

    /// Whether `heldBy` mirrors `holds` row for row.
    func mirrorMatches() throws -> Bool {
        guard let holds = db.holds, let heldBy = db.heldBy else { return true }
        guard try txn.count(holds) == txn.count(heldBy) else { return false }
        for row in try allRows() {
            guard let slot = row.slot, try txn.value(heldBy, key: row.holder + [0] + slot.bytes) != nil else {
                return false
            }
        }
        return true
    }
}
