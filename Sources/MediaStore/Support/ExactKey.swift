/// A store key as the store compares it: by its UTF-8 bytes.
///
/// `String`'s `==` is canonical equivalence: "café" written with one
/// scalar and with "e" plus a combining accent are equal strings, but two
/// keys (two entries) in the store. A dictionary of work per key (fetches,
/// preloads, keys in use) keyed by `ExactKey` keeps them apart as the
/// store does; keyed by `String`, two such keys shared one entry of it.
package struct ExactKey: Hashable, Sendable, CustomStringConvertible {
    package let string: String

    package init(_ string: String) {
        self.string = string
    }

    package func hash(into hasher: inout Hasher) {
        var string = string
        string.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    package static func == (lhs: ExactKey, rhs: ExactKey) -> Bool {
        lhs.string.utf8.elementsEqual(rhs.string.utf8)
    }

    package var description: String { string }
}
