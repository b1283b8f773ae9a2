/// A byte range as `cat --range` takes it, HTTP style and inclusive:
/// `A-B` (bytes A through B), `A-` (from A to the end), `-N` (the last N).
public enum ByteRangeSpec: Sendable, Equatable {
    case closed(first: Int, last: Int)
    case from(Int)
    case suffix(Int)

    /// Parses `text`; `nil` when it is not a range.
    public static func parse(_ text: String) -> ByteRangeSpec? {
        let parts = text.split(separator: "-", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        func number(_ part: Substring) -> Int? {
            guard !part.isEmpty, part.count <= 18, part.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(part)
        }
        switch (parts[0].isEmpty, parts[1].isEmpty) {
        case (true, true): return nil
        case (true, false): return number(parts[1]).map(ByteRangeSpec.suffix)
        case (false, true): return number(parts[0]).map(ByteRangeSpec.from)
        case (false, false):
            guard let first = number(parts[0]), let last = number(parts[1]), first <= last else { return nil }
            return .closed(first: first, last: last)
        }
    }

    /// The half-open range within an entry of `length` bytes, or `nil`
    /// when it lies outside it (or the length is unknown and needed).
    public func resolve(length: Int?) -> Range<Int>? {
        switch self {
        case .closed(let first, let last):
            if let length { guard last < length else { return nil } }
            return first..<(last + 1)
        case .from(let first):
            guard let length, first < length else { return nil }
            return first..<length
        case .suffix(let count):
            guard let length, count > 0 else { return nil }
            return max(0, length - count)..<length
        }
    }
}
