import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// Cache keys that are equal Strings (canonical equivalence) but different
/// bytes are two entries in the store; the work keyed by cache key must
/// keep them apart too.
@Suite struct ExactKeyTests {
    let composed = "track-caf\u{E9}"
    let decomposed = "track-cafe\u{301}"

    @Test func keysCompareAsTheStoreDoes() {
        #expect(composed == decomposed)
        #expect(ExactKey(composed) != ExactKey(decomposed))
        #expect(ExactKey(composed) == ExactKey("track-caf\u{E9}"))
        #expect(Set([ExactKey(composed), ExactKey(decomposed), ExactKey(composed)]).count == 2)
    }

    @Test func twoSuchKeysGetTwoFetchers() throws {
        let test = try TestCache()
        let first = test.cache.fetcher(forKey: composed)
        let second = test.cache.fetcher(forKey: decomposed)
        #expect(first !== second)
        #expect(test.cache.fetcher(forKey: composed) === first)
    }
}
