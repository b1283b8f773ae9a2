/// The meta row `rekey` of an encrypted store while a rekey is under way
/// (``MediaStore/rekey(to:options:)``): the new key's check value, each
/// key sealed under the other (``StoreEncryption/wrap(_:storeID:)``), so
/// that opening with either recovers both, and how far the move has got.
/// The row `encryption` keeps the old key's check value until the
/// transaction that ends the rekey replaces it and deletes this row.
///
/// Layout: scheme (1 byte, 1) ‖ new key check value (32) ‖ new key sealed
/// under the old (80) ‖ old key sealed under the new (80) ‖ phase (1)
/// ‖ cursor length (1, at most ``maximumCursorCount``) ‖ cursor.
package struct RekeyRow: Equatable {
    static let key = Array("rekey".utf8)
    static let scheme: UInt8 = 1
    static let wrappedKeyCount = StoreKey.byteCount + RecordSealer.overhead
    static let fixedCount = 1 + 32 + 2 * wrappedKeyCount + 2
    /// The longest cursor: a `keys` slot or a `staging` key fits.
    static let maximumCursorCount = 32

    /// What the rekey moves now.
    package enum Phase: UInt8, Sendable {
        /// Unfinished streamed writes in `staging` (first: their chunks
        /// may be under the old key when they finish); the cursor is the
        /// last staging key done.
        case staging = 1
        /// Entries in `keys`, in slot order; the cursor is the last slot done.
        case entries = 2
    }

    package let newKeyCheckValue: [UInt8]
    let newKeyUnderOld: [UInt8]
    let oldKeyUnderNew: [UInt8]
    package var phase: Phase
    /// The last row done in ``phase`` (empty: none yet).
    package var cursor: [UInt8]

    init(newKeyCheckValue: [UInt8], newKeyUnderOld: [UInt8], oldKeyUnderNew: [UInt8]) {
        precondition(newKeyCheckValue.count == 32)
        precondition(newKeyUnderOld.count == Self.wrappedKeyCount && oldKeyUnderNew.count == Self.wrappedKeyCount)
        self.newKeyCheckValue = newKeyCheckValue
        self.newKeyUnderOld = newKeyUnderOld
        self.oldKeyUnderNew = oldKeyUnderNew
        phase = .staging
        cursor = []
    }

    /// Reads a row; `nil` when its size, scheme or phase is not one this build knows.
    package init?(_ bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count >= Self.fixedCount, bytes.count <= Self.fixedCount + Self.maximumCursorCount,
            bytes[0] == Self.scheme
        else { return nil }
        var position = 1
        func take(_ count: Int) -> [UInt8] {
            defer { position += count }
            return Array(bytes[position..<position + count])
        }
        newKeyCheckValue = take(32)
        newKeyUnderOld = take(Self.wrappedKeyCount)
        oldKeyUnderNew = take(Self.wrappedKeyCount)
        guard let phase = Phase(rawValue: take(1)[0]) else { return nil }
        self.phase = phase
        let cursorCount = Int(take(1)[0])
        guard position + cursorCount == bytes.count else { return nil }
        cursor = take(cursorCount)
    }

    package func encode() -> [UInt8] {
        precondition(cursor.count <= Self.maximumCursorCount)
        return [Self.scheme] + newKeyCheckValue + newKeyUnderOld + oldKeyUnderNew + [
            phase.rawValue, UInt8(cursor.count),
        ]
            + cursor
    }
}
