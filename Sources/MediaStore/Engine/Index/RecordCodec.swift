/// How entry records are stored: as they are in a plain store; in an
/// encrypted one sealed by ``RecordSealer`` (a fresh salt each time) for
/// the row that holds them, so that the cache key, MIME type, validators,
/// user fields and inline values are not in the file, and a record
/// copied under another row fails to open.
struct RecordCodec {
    /// The sealer of an encrypted store; `nil` for a plain one.
    let sealer: RecordSealer?
    /// Sealers tried after ``sealer`` when a record does not open: the
    /// replaced key's while a rekey is under way (``StoreEncryption/firstOpening(_:)``).
    var olderSealers: [RecordSealer] = []

    private static let keysLabel = Array("keys".utf8)
    private static let stagingLabel = Array("staging".utf8)

    /// The context a record in `keys` at `slot` is sealed for.
    static func context(slot: Slot) -> [UInt8] {
        slot.withUnsafeBytes { keysLabel + $0 }
    }

    /// The context a record in `staging` under `key` (its entry id) is sealed for.
    static func context(stagingKey key: [UInt8]) -> [UInt8] {
        stagingLabel + key
    }

    /// The stored form of `record` in the row named by `context`.
    func encode(_ record: EntryRecord, context: @autoclosure () -> [UInt8]) -> [UInt8] {
        guard let sealer else { return record.encode() }
        return sealer.seal(record.encode(), context: context())
    }

    /// The record stored in `buffer`; `nil` when it is not one, or (in an
    /// encrypted store) does not open for `context`.
    func decode(_ buffer: UnsafeRawBufferPointer, context: @autoclosure () -> [UInt8]) -> EntryRecord? {
        guard let sealer else { return EntryRecord.decode(buffer) }
        let context = context()
        if let plain = try? sealer.open(buffer, context: context) { return plain.withUnsafeBytes(EntryRecord.decode) }
        for older in olderSealers {
            if let plain = try? older.open(buffer, context: context) {
                return plain.withUnsafeBytes(EntryRecord.decode)
            }
        }
        return nil
    }

    /// The record stored in `buffer` when it is `key`'s: `.some(nil)` for
    /// another key's record, `nil` for bytes that are no record (or do not
    /// open). A plain store compares the stored key before decoding the
    /// rest (a lookup's hot path).
    func decode(_ buffer: UnsafeRawBufferPointer, ifKey key: String, context: @autoclosure () -> [UInt8])
        -> EntryRecord??
    {
        guard sealer != nil else {
            guard EntryRecord.storedKeyMatches(buffer, key) else { return .some(nil) }
            return EntryRecord.decode(buffer, storedKey: key).map { .some($0) }
        }
        guard let record = decode(buffer, context: context()) else { return nil }
        return .some(record.key.utf8.elementsEqual(key.utf8) ? record : nil)
    }
}
