import MediaStore

/// Entry points for the libFuzzer targets in `FuzzTesting/` and the test
/// that replays their corpora: the decoders of bytes read from disk. Each
/// must accept or reject any input without crashing; a property that does
/// not hold throws ``FuzzFailure``. Test code: reaches the engine's
/// `package` internals.
public enum StoreFuzzing {
    /// Decodes an index record; a decoded record must re-encode to bytes
    /// that decode, and re-encoding must then be stable. (Decoding is not
    /// injective: the fuzzer found non-canonical inputs, e.g. out-of-range
    /// fields, that decode to a normalised record, so `decode(encode(r)) == r`
    /// is not required for records that were never written by `encode`.)
    /// Returns whether `bytes` decoded.
    @discardableResult
    public static func decodeRecord(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        guard let record = bytes.withUnsafeBytes(EntryRecord.decode) else { return false }
        let encoded = record.encode()
        guard let again = encoded.withUnsafeBytes(EntryRecord.decode) else {
            throw FuzzFailure("a decoded index record re-encodes to bytes that do not decode")
        }
        try fuzzCheck(again.encode() == encoded, "re-encoding a decoded index record is not stable")
        // A lookup that matched the stored key decodes with it as given
        // (compared encoded: a NaN time is not equal to itself).
        let key = record.info().key
        if bytes.withUnsafeBytes({ EntryRecord.storedKeyMatches($0, key) }) {
            try fuzzCheck(
                bytes.withUnsafeBytes { EntryRecord.decode($0, storedKey: key)?.encode() } == encoded,
                "an index record decodes differently when its matched key is given")
        }
        _ = record.info()
        return true
    }

    /// Decodes a stored chunk (header, zstd payload, size caps) and, when
    /// it decodes, checks it against the digest in its first 16 bytes.
    /// Returns whether it decoded.
    @discardableResult
    public static func decodeChunk(_ bytes: [UInt8]) -> Bool {
        let expected = ContentDigest(canonical: bytes.prefix(16))
        let decoded = bytes.withUnsafeBytes { try? ChunkStore.decode($0, expected: nil) }
        if let decoded, let expected { _ = ContentDigest(of: decoded) == expected }
        return decoded != nil
    }

    /// Decodes a pack row (store format 4) and, as bytes of the same
    /// length, a pack use row: every directory entry of a row that decodes
    /// must name bytes inside the row, readable as a value. Returns whether
    /// the pack decoded.
    @discardableResult
    public static func decodePack(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        _ = bytes.withUnsafeBytes(PackUse.init).map { $0.encode() }
        guard let entries = bytes.withUnsafeBytes(PackLayout.entries(of:)) else { return false }
        for entry in entries {
            let value = bytes.withUnsafeBytes { PackLayout.value(in: $0, offset: entry.offset, length: entry.length) }
            try fuzzCheck(value?.count == entry.length, "a pack directory entry names bytes outside its row")
        }
        return true
    }

    /// Decodes the counters record. Returns whether it decoded.
    @discardableResult
    public static func decodeCounters(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes(StoreCounters.decode) != nil
    }

    /// Runs the media sniffer and the format-tag parser.
    public static func sniff(_ bytes: [UInt8]) {
        _ = MediaSniffer.isCompressedMedia(bytes.prefix(16))
        _ = MediaSniffer.mimeType(of: bytes)
        _ = StoreFormat.version(of: bytes)
    }
}
