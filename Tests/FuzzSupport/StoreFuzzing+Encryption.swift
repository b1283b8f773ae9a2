import MediaStore

/// Entry points for the encryption layer's parsers of hostile bytes: key
/// files, the `encryption` meta row, sealed chunks and sealed records.
extension StoreFuzzing {
    private static let key = try! StoreKey(bytes: Array(0..<32))

    /// Parses `bytes` as a key file; a key that parses must be exactly the
    /// raw 32 bytes or the 64 hex digits (with an optional line end) that
    /// were given, and its hex form must parse back to it. Returns
    /// whether it parsed.
    @discardableResult
    public static func parseKeyFile(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        guard let key = try? KeyFile.parse(bytes[...], path: "fuzz") else { return false }
        let digits = Array("0123456789abcdef".utf8)
        let hex = key.bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }
        if bytes.count == StoreKey.byteCount {
            try fuzzCheck(key.bytes == bytes, "a raw key file parses to other bytes")
        } else {
            var text = bytes
            if text.last == UInt8(ascii: "\n") { text.removeLast() }
            if text.last == UInt8(ascii: "\r") { text.removeLast() }
            try fuzzCheck(text.count == 64, "a key file of \(bytes.count) bytes parsed")
            try fuzzCheck(
                String(decoding: text, as: UTF8.self).lowercased() == String(decoding: hex, as: UTF8.self),
                "a hex key file parses to other bytes")
        }
        let again = try? KeyFile.parse(hex[...], path: "fuzz")
        try fuzzCheck(again == key, "a key's hex form does not parse back to it")
        return true
    }

    /// Reads `bytes` as an `encryption` meta row, and opens them as a
    /// sealed chunk (every block, and each block alone) and as a sealed
    /// record under a fixed key: nothing traps, and nothing the fuzzer
    /// writes authenticates (it would need the key). Returns whether the
    /// row decoded.
    @discardableResult
    public static func openSealed(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let row = EncryptionRow(bytes)
        if let row { try fuzzCheck(row.encode() == bytes, "an encryption row re-encodes differently") }
        let encryption = StoreEncryption(key: key)
        let sealer = encryption.chunkSealer(
            for: ContentDigest(canonical: bytes.prefix(16) + [UInt8](repeating: 0, count: 16))!)
        if let count = try? ChunkSealer.plaintextCount(sealedCount: bytes.count) {
            try fuzzCheck(ChunkSealer.sealedCount(plaintextCount: count) == bytes.count, "sealed sizes disagree")
            let blocks = ChunkSealer.blockCount(plaintextCount: count)
            try fuzzCheck((try? sealer.open(bytes)) == nil, "forged sealed chunk authenticated")
            for block in 0..<min(blocks, 4) {
                try fuzzCheck((try? sealer.open(bytes, blocks: block..<block + 1)) == nil, "forged block authenticated")
            }
        } else {
            try fuzzCheck((try? sealer.open(bytes)) == nil, "a malformed sealed length opened")
        }
        try fuzzCheck(
            (try? encryption.recordSealer.open(bytes, context: [UInt8]())) == nil, "forged sealed record authenticated")
        return row != nil
    }

    /// Reads `bytes` as the `rekey` meta row an encrypted store keeps while
    /// a rekey is under way: nothing traps; a row that decodes re-encodes
    /// to the same bytes, decodes again to the same row, and holds a
    /// cursor of at most 32 bytes (the row's bound); and its new
    /// key check value matches no key (the fuzzer cannot make one without
    /// the key). Returns whether the row decoded.
    @discardableResult
    public static func decodeRekeyRow(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        guard let row = RekeyRow(bytes) else { return false }
        let encoded = row.encode()
        try fuzzCheck(encoded == bytes, "a rekey row re-encodes differently")
        try fuzzCheck(RekeyRow(encoded) == row, "a rekey row decodes differently once re-encoded")
        try fuzzCheck(row.cursor.count <= 32, "a rekey row holds an over-long cursor")
        try fuzzCheck(row.newKeyCheckValue.count == 32, "a rekey row's check value is not 32 bytes")
        try fuzzCheck(
            !StoreEncryption(key: key).checks(row.newKeyCheckValue, storeID: 1), "a forged check value matched a key")
        return true
    }
}
