internal import CXXHash
import Foundation

/// A store key as the store compares it: by its UTF-8 bytes.
///
/// `String`'s `==` is canonical equivalence: "café" written with one
/// scalar and with "e" plus a combining accent are equal strings, but two
/// keys (two entries) in the store. A dictionary of work per key (fetches,
/// preloads, keys in use) keyed by `ExactKey` keeps them apart as the
/// store does; keyed by `String`, two such keys shared one entry of it.
///
/// The static functions hash and compare `String` and `Substring` keys
/// the same way for callers that keep their own hashes (the facade's
/// memory tier, which keeps apart what the disk tier keeps apart).
///
/// The hash is a seeded XXH3 of the bytes, computed once per key: about
/// four times cheaper than `String`'s own hash of a URL-length key (which
/// also normalizes non-ASCII text), and a dictionary lookup then hashes
/// one integer.
@usableFromInline
package struct ExactKey: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline package let string: String
    /// ``hash(of:)-(String)`` of ``string``.
    @usableFromInline package let hash: Int

    @inlinable
    package init(_ string: String) {
        self.string = string
        self.hash = Self.hash(of: string)
    }

    @inlinable
    package func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    @inlinable
    package static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.hash == rhs.hash && equal(lhs.string, rhs.string)
    }

    @usableFromInline package var description: String { string }

    // MARK: Bytes

    /// Per process, as Swift's own hashing: colliding keys cannot be
    /// chosen ahead of time.
    private static let seed = UInt64.random(in: .min ... .max)

    /// The seeded XXH3 (64-bit) of `string`'s UTF-8 bytes.
    @inlinable
    package static func hash(of string: String) -> Int {
        withUTF8(of: string) { hash(utf8: $0) }
    }

    /// The seeded XXH3 (64-bit) of `substring`'s UTF-8 bytes: the same as
    /// the hash of the equal `String`.
    @inlinable
    package static func hash(of substring: Substring) -> Int {
        withUTF8(of: substring) { hash(utf8: $0) }
    }

    @usableFromInline
    package static func hash(utf8 bytes: UnsafeRawBufferPointer) -> Int {
        Int(truncatingIfNeeded: mediacache_XXH3_64bits_withSeed(bytes.baseAddress, bytes.count, seed))
    }

    /// Whether two strings have the same UTF-8 bytes.
    @inlinable
    package static func equal(_ lhs: String, _ rhs: String) -> Bool {
        withUTF8(of: lhs) { left in withUTF8(of: rhs) { right in equal(utf8: left, right) } }
    }

    /// Whether two substrings have the same UTF-8 bytes.
    @inlinable
    package static func equal(_ lhs: Substring, _ rhs: Substring) -> Bool {
        withUTF8(of: lhs) { left in withUTF8(of: rhs) { right in equal(utf8: left, right) } }
    }

    @inlinable
    static func equal(utf8 left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> Bool {
        left.count == right.count && (left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0)
    }

    /// `body` over the string's UTF-8 bytes: in place when the string is
    /// native (no copy, no retain), else through a native copy.
    @inlinable
    static func withUTF8<R>(of string: String, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = string.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        var string = string
        return string.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }

    @inlinable
    static func withUTF8<R>(of substring: Substring, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let result = substring.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        var substring = substring
        return substring.withUTF8 { body(UnsafeRawBufferPointer($0)) }
    }
}
