/// A sub-range of a resource, as HLS writes it (`length@offset`): the
/// `length` bytes starting at `offset`. A parsed playlist always carries
/// the resolved offset, also where the playlist left it out.
public struct ByteRange: Sendable, Hashable, CustomStringConvertible {
    /// The offset of the first byte.
    public let offset: Int
    /// How many bytes; at least 1.
    public let length: Int

    /// A range of `length` bytes from `offset`; nil when either is out of
    /// range (negative offset, length below 1, or an end past `Int.max`).
    public init?(offset: Int, length: Int) {
        guard offset >= 0, length >= 1, offset <= Int.max - length else { return nil }
        self.offset = offset
        self.length = length
    }

    /// The bytes as a half-open range.
    public var range: Range<Int> { offset..<(offset + length) }

    /// The offset just past the last byte: where a following sub-range
    /// without an offset starts.
    public var end: Int { offset + length }

    /// `length@offset`, the form playlists use.
    public var description: String { "\(length)@\(offset)" }

    /// Splits `n[@o]` into its decimal integers; nil when it is not of that form.
    static func parse(_ text: Substring) -> (length: Int, offset: Int?)? {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard let length = decimalInteger(parts[0]) else { return nil }
        guard parts.count == 2 else { return (length, nil) }
        guard let offset = decimalInteger(parts[1]) else { return nil }
        return (length, offset)
    }

    /// A non-negative decimal integer of digits only (no sign, no spaces)
    /// that fits an `Int`; nil otherwise.
    static func decimalInteger(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 20, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(text)
    }
}
