/// A parsed `Content-Range: bytes first-last/total` header (RFC 9110 §14.4).
public struct ContentRange: Sendable, Equatable {
    /// The bytes the body carries; `nil` for an unsatisfied-range answer (`bytes */total`).
    public var range: Range<Int>?
    /// The total length of the resource, when the origin knows it.
    public var total: Int?

    public init(range: Range<Int>?, total: Int?) {
        self.range = range
        self.total = total
    }

    /// Parses a header value; `nil` when malformed.
    public init?(header: String) {
        let value = header.trimmingCharacters(in: .whitespaces)
        guard value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let totalText = halves[1].trimmingCharacters(in: .whitespaces)
        if totalText == "*" {
            total = nil
        } else {
            guard let parsed = Int(totalText), parsed >= 0 else { return nil }
            total = parsed
        }
        let rangeText = halves[0].trimmingCharacters(in: .whitespaces)
        if rangeText == "*" {
            range = nil
            return
        }
        let bounds = rangeText.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        // `last < Int.max`: `last + 1` must not overflow (found by FuzzHTTP).
        guard bounds.count == 2, let first = Int(bounds[0]), let last = Int(bounds[1]), first >= 0, last >= first,
            last < Int.max
        else { return nil }
        if let total, last >= total { return nil }
        range = first..<(last + 1)
    }
}
