import Foundation
import Testing

@testable import MediaServer

/// Header values trimmed of spaces and tabs on their bytes: the same
/// answer as Foundation's trimming, whatever the characters around them,
/// and control characters in a response field become spaces.
struct OptionalWhitespaceTests {
    @Test(arguments: [
        "", " ", "\t \t", "bytes=0-1", "  bytes=0-1\t", "\t\"é\"  ", " 日本 語 ", "a", " a ", "\u{301}x\u{301} ",
        " \u{1F600}\t", "\r bytes \r", "\u{A0}x\u{A0}",
    ])
    func trimsAsFoundationDoes(_ value: String) {
        #expect(value.trimmingOWS() == value.trimmingCharacters(in: [" ", "\t"]))
        #expect(Substring(value).trimmingOWS() == value.trimmingCharacters(in: [" ", "\t"]))
    }

    @Test func controlCharactersInAFieldBecomeSpaces() {
        var head = ResponseHead(status: 200)
        head.add("X-A", "one\r\ntwo\u{7F}é\u{0}")
        head.add("X-B", "plain é value")
        #expect(head.value("X-A") == "one  two é ")
        #expect(head.value("X-B") == "plain é value")
    }
}
