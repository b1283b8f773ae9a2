import Testing

@testable import MediaServer

/// Entity tags as `If-None-Match`, `If-Range` and stored entries give them.
@Suite struct EntityTagTests {
    @Test func strongWeakAndMalformedTags() {
        #expect(EntityTag("\"abc\"").map { "\($0.isWeak) \($0.opaque)" } == "false \"abc\"")
        #expect(EntityTag(" W/\"5f-1a2b\" ").map { "\($0.isWeak) \($0.opaque)" } == "true \"5f-1a2b\"")
        #expect(EntityTag("\"\"").map { "\($0.isWeak) \($0.opaque)" } == "false \"\"")
        for malformed in ["", "\"", "abc", "\"abc", "abc\"", "\"a\"b\"", "W/abc", "\"a\"\u{301}b\""] {
            #expect(EntityTag(malformed) == nil, "\(malformed)")
        }
        #expect(EntityTag.list("\"a\", W/\"b\", bad, \"c,d\"")?.map(\.opaque) == ["\"a\"", "\"b\"", "\"c,d\""])
        #expect(EntityTag.list(" * ") == nil)
    }
}
