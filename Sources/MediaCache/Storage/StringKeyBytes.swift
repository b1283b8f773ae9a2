import Foundation
import MediaStore

/// String keys as the disk tier sees them: their UTF-8 bytes.
///
/// The store compares keys as bytes, so "é" as one scalar and as "e" plus
/// a combining accent are two entries there, while `String`'s `==`
/// (canonical equivalence) calls them equal. The memory tier hashes and
/// compares String keys with these functions so that it keeps apart what
/// the disk tier keeps apart (it aliased them, and a get of one key could
/// return the other's object). Hashing the bytes with XXH3 is also about
/// four times cheaper than `String`'s hash of a URL-length key, which every
/// facade get pays once.
@usableFromInline
enum StringKeyBytes {
    /// Per process, as Swift's own hashing: colliding keys cannot be
    /// chosen ahead of time.
    @usableFromInline static let seed = UInt64.random(in: .min ... .max)

    /// The XXH3 hash of the key's UTF-8 bytes.
    @usableFromInline
    static func hash(_ key: String) -> Int {
        var key = key
        return key.withUTF8 { Int(truncatingIfNeeded: ContentDigest(of: UnsafeRawBufferPointer($0), seed: seed).low) }
    }

    /// Whether two keys have the same UTF-8 bytes.
    @usableFromInline
    static func equal(_ lhs: String, _ rhs: String) -> Bool {
        var lhs = lhs
        var rhs = rhs
        return lhs.withUTF8 { left in
            rhs.withUTF8 { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }
}
