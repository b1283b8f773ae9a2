import Testing

@testable import MediaStore

/// `ExactKey`'s hash and comparison, which the facade's memory tier also
/// uses for its String and Substring keys: by the UTF-8 bytes.
@Suite struct ExactKeyHashTests {
    let composed = "caf\u{E9}"
    let decomposed = "cafe\u{301}"

    @Test func canonicallyEquivalentKeysDifferInHashAndComparison() {
        #expect(composed == decomposed)
        #expect(ExactKey.hash(of: composed) != ExactKey.hash(of: decomposed))
        #expect(!ExactKey.equal(composed, decomposed))
        #expect(ExactKey(composed) != ExactKey(decomposed))
        #expect(ExactKey(composed).hash == ExactKey.hash(of: composed))
    }

    @Test func aSubstringHashesAndComparesAsTheEqualString() {
        let long = "https://media.example.com/v1/tracks/7/segment-7.m4s?token=\(composed)"
        let substring = ("prefix-" + long).dropFirst(7)
        #expect(ExactKey.hash(of: substring) == ExactKey.hash(of: long))
        #expect(ExactKey.equal(substring, Substring(long)))
        #expect(!ExactKey.equal(substring, substring.dropLast()))
    }

    @Test func lengthsAndEmptyKeys() {
        #expect(ExactKey.equal("", ""))
        #expect(!ExactKey.equal("", "a"))
        #expect(!ExactKey.equal("ab", "abc"))
        #expect(ExactKey.hash(of: "") == ExactKey.hash(of: Substring("")))
        #expect(ExactKey.hash(of: "ab") != ExactKey.hash(of: "ba"))
    }
}
