import Foundation

/// Where an entry sits in `keys` (and its `access` row), or a chunk in
/// `chunks` and `refs`: 16 bytes of XXH3-128 (of the cache key, or of the
/// chunk's bytes) followed by a 2-byte big-endian ordinal.
///
/// Different values whose digests collide get different ordinals; the
/// full cache key or the chunk bytes are compared to tell them apart, so
/// they never alias. Used as an LMDB key as it is.
package struct Slot: Hashable, Sendable, ContiguousBytes, CustomStringConvertible {
    static let size = 18
    /// The bytes before the ordinal: every slot of one digest starts with them.
    static let digestSize = 16

    /// The 18 stored bytes, held inline (no allocation per slot: a read
    /// makes one and keeps it in the dictionary of pending access times):
    /// the digest's two words and the ordinal, each big-endian in memory.
    /// A tuple of these types is laid out in order without padding
    /// before its end, so its first 18 bytes are the stored form.
    private var storage: (UInt64, UInt64, UInt16)

    /// The slot of `digest` at `ordinal`.
    init(_ digest: ContentDigest, ordinal: UInt16) {
        storage = (digest.high.bigEndian, digest.low.bigEndian, ordinal.bigEndian)
    }

    /// Reads a slot from its stored bytes; `nil` unless there are exactly 18.
    init?(_ stored: some Collection<UInt8>) {
        guard stored.count == Self.size else { return nil }
        storage = (0, 0, 0)
        withUnsafeMutableBytes(of: &storage) { raw in
            raw.copyBytes(from: stored)
        }
    }

    /// A hash of the slot for ``SlotTable``: the digest's low word mixed
    /// with the ordinal, without a `Hasher`. An entry's digest is a seeded
    /// hash of its key (``MediaStore``'s key seed), so its bits are not
    /// the client's to choose.
    var tableHash: Int {
        Int(truncatingIfNeeded: storage.1) ^ Int(storage.2)
    }

    /// The 18 stored bytes, as an array (for the few callers that keep them).
    var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// The 2-byte ordinal that tells colliding digests apart.
    var ordinal: UInt16 {
        UInt16(bigEndian: storage.2)
    }

    /// The digest part (the cache key's, or the chunk content's).
    var digest: ContentDigest {
        ContentDigest(high: UInt64(bigEndian: storage.0), low: UInt64(bigEndian: storage.1))
    }

    /// Whether `key` (a stored slot of any table) has this slot's digest.
    func sharesDigest(with key: [UInt8]) -> Bool {
        key.count >= Self.digestSize
            && withUnsafeBytes { mine in key.prefix(Self.digestSize).elementsEqual(mine.prefix(Self.digestSize)) }
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: storage) { raw in
            try body(UnsafeRawBufferPointer(rebasing: raw.prefix(Self.size)))
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(storage.0)
        hasher.combine(storage.1)
        hasher.combine(storage.2)
    }

    package static func == (lhs: Slot, rhs: Slot) -> Bool {
        lhs.storage == rhs.storage
    }

    /// The digest in hex and the ordinal, for reports.
    package var description: String {
        bytes.prefix(Self.digestSize).map { String(format: "%02x", $0) }.joined() + "/\(ordinal)"
    }
}
