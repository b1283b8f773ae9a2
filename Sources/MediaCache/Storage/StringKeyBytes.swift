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

    /// Whether keys of type `Key` are hashed and compared here: `String`
    /// and `Substring` (the disk tier stores other keys by
    /// `KeyCoder.encode`, and compares them as the type's `==` says: two
    /// keys a type calls equal must encode to the same string).
    @inlinable
    static func applies<Key>(to _: Key.Type) -> Bool {
        Key.self == String.self || Key.self == Substring.self
    }

    /// The XXH3 hash of the key's UTF-8 bytes (`key` a `String` or `Substring`).
    @inlinable
    static func hash<Key>(_ key: Key) -> Int {
        withUTF8(of: key) { Int(truncatingIfNeeded: ContentDigest(of: $0, seed: seed).low) }
    }

    /// Whether two keys have the same UTF-8 bytes (both `String` or both `Substring`).
    @inlinable
    static func equal<Key>(_ lhs: Key, _ rhs: Key) -> Bool {
        withUTF8(of: lhs) { left in
            withUTF8(of: rhs) { right in
                left.count == right.count
                    && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
            }
        }
    }

    @inlinable
    static func withUTF8<Key, R>(of key: Key, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if Key.self == String.self {
            var string = key as! String
            return string.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        }
        var substring = key as! Substring
        return substring.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }
}
