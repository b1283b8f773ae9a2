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

    /// The 18 stored bytes.
    let bytes: [UInt8]

    /// The slot of `digest` at `ordinal`.
    init(_ digest: ContentDigest, ordinal: UInt16) {
        // One allocation of exactly 18 bytes: the digest big-endian, then the ordinal.
        bytes = [UInt8](unsafeUninitializedCapacity: Self.size) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: digest.high.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: digest.low.bigEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: ordinal.bigEndian, toByteOffset: 16, as: UInt16.self)
            count = Self.size
        }
    }

    /// Reads a slot from its stored bytes; `nil` unless there are exactly 18.
    init?(_ stored: some Collection<UInt8>) {
        guard stored.count == Self.size else { return nil }
        self.bytes = Array(stored)
    }

    /// The 2-byte ordinal that tells colliding digests apart.
    var ordinal: UInt16 {
        UInt16(bytes[16]) << 8 | UInt16(bytes[17])
    }

    /// The digest part (the cache key's, or the chunk content's).
    var digest: ContentDigest? {
        ContentDigest(canonical: bytes.prefix(Self.digestSize))
    }

    /// Whether `key` (a stored slot of any table) has this slot's digest.
    func sharesDigest(with key: [UInt8]) -> Bool {
        key.count >= Self.digestSize && key.prefix(Self.digestSize).elementsEqual(bytes.prefix(Self.digestSize))
    }

    package func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    /// Hashes the 18 bytes as two words and a half-word (the synthesized
    /// conformance feeds them to the hasher one byte at a time, and even
    /// `combine(bytes:)` took a visible share of a 1 KiB read: every read
    /// records its slot in a dictionary of pending access times).
    package func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { raw in
            if raw.count == Self.size {
                hasher.combine(raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
                hasher.combine(raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                hasher.combine(raw.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
            } else {
                hasher.combine(bytes: raw)
            }
        }
    }

    /// Compares the bytes with one `memcmp`.
    package static func == (lhs: Slot, rhs: Slot) -> Bool {
        lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    /// The digest in hex and the ordinal, for reports.
    package var description: String {
        bytes.prefix(Self.digestSize).map { String(format: "%02x", $0) }.joined() + "/\(ordinal)"
    }
}
