import Foundation
import HLSPlaylist
import TestSupport
import Testing

@testable import MediaServer

@Suite struct ByteRangeSetTests {
    func resolve(_ header: String, _ length: Int) -> ByteRangeSet.Resolution? {
        ByteRangeSet.parse(header)?.resolve(length: length)
    }

    @Test func singleRanges() {
        #expect(resolve("bytes=0-99", 1000) == .single(0..<100))
        #expect(resolve("bytes=500-", 1000) == .single(500..<1000))
        #expect(resolve("bytes=-200", 1000) == .single(800..<1000))
        #expect(resolve("bytes=-2000", 1000) == .single(0..<1000))
        #expect(resolve("bytes=900-5000", 1000) == .single(900..<1000))
        #expect(resolve("BYTES = 1-1", 10) == .single(1..<2))
        #expect(resolve("bytes=0-99999999999999999999999", 10) == .single(0..<10))
    }

    @Test func severalRanges() {
        #expect(resolve("bytes=0-9, 20-29", 100) == .several([0..<10, 20..<30]))
        #expect(resolve("bytes=50-59,0-9", 100) == .several([50..<60, 0..<10]))
        // Overlapping or adjacent ranges merge into one.
        #expect(resolve("bytes=0-9,5-20,21-30", 100) == .single(0..<31))
        // Unsatisfiable members are dropped.
        #expect(resolve("bytes=0-9,500-600", 100) == .single(0..<10))
        #expect(resolve("bytes=0-1,,3-4,", 100) == .several([0..<2, 3..<5]))
    }

    @Test func unsatisfiable() {
        #expect(resolve("bytes=1000-", 1000) == .unsatisfiable)
        #expect(resolve("bytes=1000-2000", 1000) == .unsatisfiable)
        #expect(resolve("bytes=-0", 1000) == .unsatisfiable)
        #expect(resolve("bytes=0-", 0) == .unsatisfiable)
    }

    /// Numbers at and beyond the 64-bit boundary: nothing overflows, a first
    /// byte past the end is unsatisfiable, a huge last or suffix means the whole.
    @Test func sixtyFourBitBoundaries() {
        let max = "9223372036854775807"
        #expect(resolve("bytes=\(max)-", 1000) == .unsatisfiable)
        #expect(resolve("bytes=\(max)-", Int.max) == .unsatisfiable)
        #expect(resolve("bytes=9223372036854775806-\(max)", Int.max) == .single((Int.max - 1)..<Int.max))
        #expect(resolve("bytes=99999999999999999999-", Int.max) == .unsatisfiable)
        #expect(resolve("bytes=-99999999999999999999", 1000) == .single(0..<1000))
        #expect(resolve("bytes=-\(max)", Int.max) == .single(0..<Int.max))
        #expect(resolve("bytes=0-\(max)", Int.max) == .single(0..<Int.max))
        #expect(resolve("bytes=-0", 0) == .unsatisfiable)
        #expect(resolve("bytes=-1", 0) == .unsatisfiable)
    }

    @Test func invalidIsIgnored() {
        for header in [
            "bytes=5-1", "items=0-1", "bytes=", "bytes=-", "bytes=a-b", "bytes 0-1", "bytes=1-2-3", "bytes=+1-2",
            "bytes=0x1-",
        ] {
            #expect(ByteRangeSet.parse(header) == nil, "\(header)")
        }
        let tooMany = "bytes=" + (0..<65).map { "\($0 * 2)-\($0 * 2)" }.joined(separator: ",")
        #expect(ByteRangeSet.parse(tooMany) == nil)
    }

    /// A `last` below its `first` makes the set invalid (RFC 9110 §14.1.1)
    /// even when both are beyond 64 bits: the numbers as written compare,
    /// not their saturated values (which made such a set a 416).
    @Test func lastBelowFirstBeyondSixtyFourBits() {
        let max = "9223372036854775807"
        for header in [
            "bytes=99999999999999999999-99999999999999999998", "bytes=\(max)0-\(max)",
            "bytes=100000000000000000000-\(max)",
        ] {
            #expect(ByteRangeSet.parse(header) == nil, "\(header)")
        }
        // Equal or ascending numbers as written stay valid, leading zeros aside.
        #expect(resolve("bytes=99999999999999999998-99999999999999999999", 1000) == .unsatisfiable)
        #expect(resolve("bytes=000\(max)-\(max)", Int.max) == .unsatisfiable)
        #expect(resolve("bytes=\(max)-0000099999999999999999999", Int.max) == .unsatisfiable)
    }

    /// The byte-level parser agrees with a plain character-level reading of
    /// the grammar (split on commas and the first dash, trim spaces and
    /// tabs) on random values built from the grammar's pieces and from
    /// characters that combine with them.
    @Test func agreesWithACharacterLevelReading() {
        let numbers = ["", "0", "1", "42", "9223372036854775807", "99999999999999999999"]
        let spaces = ["", " ", "\t", " \t "]
        let hostile = ["\u{301}", "é", "日", "a", "+", "\r", "\u{A0}", "=", "-", ",", "BYTES", " "]
        var generator = SplitMix64(seed: 0x0B17E5)
        var valid = 0
        for _ in 0..<20_000 {
            let items = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                numbers.randomElement(using: &generator)! + "-" + numbers.randomElement(using: &generator)!
            }
            let unit = ["bytes", "BYTES", "ByTeS", "byte"].randomElement(using: &generator)!
            var value =
                spaces.randomElement(using: &generator)! + unit + "="
                + items.joined(separator: spaces.randomElement(using: &generator)! + ",")
                + spaces.randomElement(using: &generator)!
            // Half the values get a stranger inserted between two characters.
            if Bool.random(using: &generator) {
                let at = value.index(value.startIndex, offsetBy: Int.random(in: 0...value.count, using: &generator))
                value.insert(contentsOf: hostile.randomElement(using: &generator)!, at: at)
            }
            let parsed = ByteRangeSet.parse(value)
            #expect(parsed == Self.characterLevel(value), "\(value.debugDescription)")
            if parsed != nil { valid += 1 }
        }
        // The premise: the values reach valid sets, not only refusals.
        #expect(valid > 500, "\(valid) of 20,000 values were valid sets")
    }

    static func characterLevel(_ header: String) -> ByteRangeSet? {
        let value = header.trimmingCharacters(in: [" ", "\t"])
        guard let equals = value.firstIndex(of: "="),
            value[..<equals].trimmingCharacters(in: [" ", "\t"]).lowercased() == "bytes"
        else { return nil }
        var specs: [ByteRangeSet.Spec] = []
        for element in value[value.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let item = element.trimmingCharacters(in: [" ", "\t"])
            if item.isEmpty { continue }
            let halves = item.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard halves.count == 2 else { return nil }
            func number(_ text: Substring) -> Int? {
                guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
                return Int(text) ?? Int.max
            }
            // The numbers as written, not saturated: without leading zeros,
            // the longer is larger, and digits of one length compare as text.
            func ascending(_ first: Substring, _ last: Substring) -> Bool {
                let (a, b) = (first.drop { $0 == "0" }, last.drop { $0 == "0" })
                return a.count != b.count ? a.count < b.count : a <= b
            }
            switch (halves[0].isEmpty, halves[1].isEmpty) {
            case (true, true): return nil
            case (true, false):
                guard let count = number(halves[1]) else { return nil }
                specs.append(.suffix(count))
            case (false, true):
                guard let first = number(halves[0]) else { return nil }
                specs.append(.from(first))
            case (false, false):
                guard let first = number(halves[0]), let last = number(halves[1]), ascending(halves[0], halves[1])
                else { return nil }
                specs.append(.closed(first: first, last: last))
            }
            if specs.count > ByteRangeSet.maxRanges { return nil }
        }
        return specs.isEmpty ? nil : ByteRangeSet(specs)
    }
}
