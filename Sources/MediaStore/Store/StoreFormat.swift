import Foundation

/// The format identity written in `meta` under `format`.
package enum StoreFormat {
    static let magic: [UInt8] = Array("MCSTORE\u{1}".utf8)
    /// 2: an entry's expiry may be stored as `Date`'s own bit pattern
    /// (``EntryRecord/Flags/exactExpiry``). Format 1 stores open unchanged
    /// and are marked 2 on the first writable open.
    /// 3: a raw chunk of more than one block carries a table of per-block
    /// digests (``BlockDigests``) after its header. Chunks without one
    /// still read as before, so format 1 and 2 stores open unchanged and
    /// are marked 3 on the first writable open; older versions refuse a
    /// format 3 store.
    /// 4: whole values of more than 128 bytes up to the inline limit (at
    /// most 16 KiB) are stored several to a row in
    /// `packs` (``PackLayout``), with each pack's use in `packUse`;
    /// records name their value by pack and offset (``EntryRecord/Flags/packed``).
    /// Inline values and chunks of older formats read as before, so
    /// format 1–3 stores open unchanged and are marked 4 on the first
    /// writable open (which creates the two databases); older versions
    /// refuse a format 4 store.
    /// 5: entries are held by named holders (`holds` and `heldBy`,
    /// ``HoldTable``); the record's pinned flag says "held by someone".
    /// A format 4 store's pinned entries become held by
    /// ``MediaStore/appHolder`` in the transaction that marks the store 5
    /// (its first writable open); read-only, a pinned flag without rows
    /// reads as that holder. Older versions refuse a format 5 store.
    static let version: UInt16 = 5
    /// The version of an encrypted store: format 5 with the meta row
    /// `encryption` (``EncryptionRow``) and its values sealed. A plain
    /// store stays at ``version``; builds that read format 5 at most
    /// refuse an encrypted store instead of reading sealed bytes as
    /// corrupt ones.
    static let encryptedVersion: UInt16 = 6
    /// The version of an encrypted store while a key rotation is under way
    /// (``MediaStore/rekey(to:options:)``): format 6 with the meta row
    /// `rekey` (``RekeyRow``), its entries under either key. The rekey's
    /// first step marks it 7 and its last marks it 6 again, so a build that
    /// knows no rekey (and would read entries under the new key as corrupt
    /// ones) refuses it instead.
    static let rekeyingVersion: UInt16 = 7
    /// The newest version this build reads.
    static let newestVersion = rekeyingVersion

    static func encoded(version: UInt16 = version) -> [UInt8] {
        var writer = ByteWriter()
        writer.write(raw: magic)
        writer.write(littleEndian: version)
        return writer.bytes
    }

    /// The version in `bytes`, or `nil` when the magic does not match.
    package static func version(of bytes: [UInt8]) -> UInt16? {
        guard bytes.count == magic.count + 2, Array(bytes.prefix(magic.count)) == magic else { return nil }
        return UInt16(bytes[magic.count]) | UInt16(bytes[magic.count + 1]) << 8
    }

    /// Checks that `path` starts with an LMDB meta page (magic 0xBEEFC0DE
    /// after the 16-byte page header), so that a plain or truncated file
    /// is refused before LMDB maps it.
    package static func looksLikeLMDB(path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 24), head.count == 24 else { return false }
        let magic = head[16..<20].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        let version = head[20..<24].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        return UInt32(littleEndian: magic) == 0xBEEF_C0DE && UInt32(littleEndian: version) == 1
    }
}
