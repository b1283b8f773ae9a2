/// An entity tag (RFC 9110 §8.8.3): `"opaque"` or weak `W/"opaque"`, and
/// the comparisons `If-None-Match` (weak) and `If-Range` (strong) use.
public struct EntityTag: Sendable, Equatable {
    /// Whether it is weak (`W/` prefix).
    public var isWeak: Bool
    /// The quoted part, quotes included.
    public var opaque: String

    /// Parses one entity tag; `nil` when malformed.
    public init?(_ text: some StringProtocol) {
        var value = Substring(Substring(text).trimmingOWS())
        isWeak = value.hasPrefix("W/")
        if isWeak { value = value.dropFirst(2) }
        // No quote inside (checked on the bytes: a quote is ASCII; Foundation's
        // substring search here was most of the time of a stored reply's plan).
        guard value.count >= 2, value.first == "\"", value.last == "\"",
            !value.dropFirst().dropLast().utf8.contains(UInt8(ascii: "\""))
        else {
            return nil
        }
        opaque = String(value)
    }

    /// Strong comparison: both strong and the same opaque tag.
    public func strongMatches(_ other: EntityTag) -> Bool { !isWeak && !other.isWeak && opaque == other.opaque }

    /// Weak comparison: the same opaque tag, weak or not.
    public func weakMatches(_ other: EntityTag) -> Bool { opaque == other.opaque }

    /// The tags of an `If-None-Match` list; `nil` for `*`. Malformed members are skipped.
    public static func list(_ header: String) -> [EntityTag]? {
        if header.trimmingOWS() == "*" { return nil }
        var tags: [EntityTag] = []
        var current = ""
        var quoted = false
        for character in header {
            if character == "\"" { quoted.toggle() }
            if character == ",", !quoted {
                if let tag = EntityTag(current) { tags.append(tag) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if let tag = EntityTag(current) { tags.append(tag) }
        return tags
    }
}
