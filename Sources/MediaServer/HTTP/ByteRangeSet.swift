import HLSPlaylist

/// The `Range` header of a request (RFC 9110 §14.1.2, §14.2):
/// `bytes=` then one or more of `first-last`, `first-` and `-suffix`.
///
/// ``parse(_:)`` returns `nil` for anything that is not a valid bytes
/// range set (another unit, a `last` below its `first`, junk): RFC 9110
/// says such a `Range` is ignored and the whole representation sent.
/// Numbers too large for `Int` saturate at `Int.max`, and no arithmetic
/// here can overflow: a huge `last` means "to the end", a huge suffix "the
/// whole representation", and a huge `first` is past every end (a 416).
/// A `last` below its `first` is told from the digits as written, so it
/// stays invalid when both are beyond `Int.max`.
///
/// ```swift
/// ByteRangeSet.parse("bytes=0-499, -500")?.resolve(length: 10_000)   // .several
/// ```
public struct ByteRangeSet: Sendable, Equatable {
    /// One range as written.
    public enum Spec: Sendable, Equatable {
        /// `first-last`, inclusive.
        case closed(first: Int, last: Int)
        /// `first-`, to the end.
        case from(Int)
        /// `-count`, the last `count` bytes.
        case suffix(Int)
    }

    /// What a range set asks of a representation of known length.
    public enum Resolution: Sendable, Equatable {
        /// One satisfiable range (after dropping unsatisfiable ones and
        /// merging overlapping or adjacent ones): a 206.
        case single(Range<Int>)
        /// Several disjoint satisfiable ranges, in the order asked.
        case several([Range<Int>])
        /// No range is satisfiable: a 416 with `Content-Range: bytes */length`.
        case unsatisfiable
    }

    /// The ranges, in the order written.
    public var specs: [Spec]

    public init(_ specs: [Spec]) { self.specs = specs }

    /// Most ranges taken from one header; more make it invalid (a guard
    /// against range sets built to cost the server work).
    public static let maxRanges = 64

    /// Parses a `Range` header value; `nil` when it is not a valid bytes range set.
    /// Works on the value's bytes (HTTP's grammar is bytes, and every byte a
    /// valid set holds is ASCII): one pass, no character breaking.
    public static func parse(_ header: String) -> ByteRangeSet? {
        let bytes = Array(header.utf8)[...]
        guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")),
            trimmed(bytes[..<equals]).map({ $0 | 0x20 }) == Array("bytes".utf8)
        else { return nil }
        var specs: [Spec] = []
        var rest = bytes[(equals + 1)...]
        while true {
            let comma = rest.firstIndex(of: UInt8(ascii: ",")) ?? rest.endIndex
            // RFC 9110 §5.6.1: empty list elements are allowed and ignored.
            let item = trimmed(rest[..<comma])
            if !item.isEmpty {
                guard let spec = spec(item) else { return nil }
                specs.append(spec)
                if specs.count > maxRanges { return nil }
            }
            guard comma < rest.endIndex else { break }
            rest = rest[(comma + 1)...]
        }
        return specs.isEmpty ? nil : ByteRangeSet(specs)
    }

    /// `bytes` without the optional whitespace (spaces and tabs) around it.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isOWS = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        guard let first = bytes.firstIndex(where: { !isOWS($0) }), let last = bytes.lastIndex(where: { !isOWS($0) })
        else { return [] }
        return bytes[first...last]
    }

    private static func spec(_ item: ArraySlice<UInt8>) -> Spec? {
        guard let dash = item.firstIndex(of: UInt8(ascii: "-")) else { return nil }
        let (head, tail) = (item[..<dash], item[(dash + 1)...])
        switch (head.isEmpty, tail.isEmpty) {
        case (true, true): return nil
        case (true, false): return number(tail).map(Spec.suffix)
        case (false, true): return number(head).map(Spec.from)
        case (false, false):
            guard let first = number(head), let last = number(tail), isNotAbove(head, tail) else { return nil }
            return .closed(first: first, last: last)
        }
    }

    /// Whether the digits `first` are not above the digits `last` as
    /// written (leading zeros aside): their saturated values cannot tell
    /// two numbers beyond `Int.max` apart.
    private static func isNotAbove(_ first: ArraySlice<UInt8>, _ last: ArraySlice<UInt8>) -> Bool {
        let zero = UInt8(ascii: "0")
        let first = first.drop { $0 == zero }
        let last = last.drop { $0 == zero }
        guard first.count == last.count else { return first.count < last.count }
        return !last.lexicographicallyPrecedes(first)
    }

    /// A run of digits, saturating at `Int.max`.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        var value = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
            if overflow1 || overflow2 { return Int.max }
            value = sum
        }
        return value
    }

    /// The bytes the set asks for when they are known before the length:
    /// one `first-last` or `first-` range (an open end is `Int.max`). `nil`
    /// for a suffix, several ranges, or a `first` of `Int.max` (a saturated
    /// number past every end: only the length can tell that it is a 416).
    package var bytesKnownBeforeLength: Range<Int>? {
        guard specs.count == 1 else { return nil }
        switch specs[0] {
        case .closed(let first, let last) where first < Int.max:
            return first..<(last == Int.max ? Int.max : last + 1)
        case .from(let first) where first < Int.max:
            return first..<Int.max
        case .closed, .from, .suffix:
            return nil
        }
    }

    /// The half-open range `spec` selects in `length` bytes; `nil` when unsatisfiable.
    public static func range(of spec: Spec, length: Int) -> Range<Int>? {
        switch spec {
        case .closed(let first, let last):
            guard first < length else { return nil }
            return first..<(last >= length - 1 ? length : last + 1)
        case .from(let first):
            guard first < length else { return nil }
            return first..<length
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count)..<length
        }
    }

    /// What the set asks of `length` bytes (RFC 9110 §14.1.2: a range set
    /// is satisfiable when any of its ranges is).
    public func resolve(length: Int) -> Resolution {
        let satisfiable = specs.compactMap { Self.range(of: $0, length: length) }
        guard !satisfiable.isEmpty else { return .unsatisfiable }
        var merged: [Range<Int>] = []
        for range in satisfiable.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        if merged.count == 1 { return .single(merged[0]) }
        // Disjoint: keep the order asked (RFC 9110 §14.6), each once.
        var ordered: [Range<Int>] = []
        for range in satisfiable {
            if let home = merged.first(where: { $0.lowerBound <= range.lowerBound && range.upperBound <= $0.upperBound }
            ),
                !ordered.contains(home)
            {
                ordered.append(home)
            }
        }
        return .several(ordered)
    }
}
