/// The meta row `encryption` of an encrypted store (format 6): the
/// scheme's number (1 byte, 1: ``StoreEncryption``'s) and the key check
/// value (32 bytes, ``StoreEncryption/keyCheckValue(storeID:)``). A plain
/// store has no such row.
package struct EncryptionRow: Equatable {
    static let key = Array("encryption".utf8)
    static let scheme: UInt8 = 1
    static let size = 1 + 32

    package let keyCheckValue: [UInt8]

    init(keyCheckValue: [UInt8]) {
        precondition(keyCheckValue.count == Self.size - 1)
        self.keyCheckValue = keyCheckValue
    }

    /// Reads a row; `nil` when its size or scheme is not one this build knows.
    package init?(_ bytes: some Collection<UInt8>) {
        guard bytes.count == Self.size, bytes.first == Self.scheme else { return nil }
        keyCheckValue = Array(bytes.dropFirst())
    }

    package func encode() -> [UInt8] {
        [Self.scheme] + keyCheckValue
    }
}
