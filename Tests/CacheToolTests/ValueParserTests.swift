import Foundation
import MediaStore
import Testing

@testable import CacheToolCore

@Suite struct ValueParserTests {
    @Test(arguments: [
        ("0", 0), ("512", 512), ("64k", 65536), ("64K", 65536), ("10MB", 10 << 20), ("1.5GiB", 1_610_612_736),
        (" 2 g ", 2 << 30), ("3b", 3), ("1t", 1 << 40),
    ])
    func sizes(text: String, bytes: Int) {
        #expect(ByteSize.parse(text) == bytes)
    }

    @Test(arguments: ["", "k", "-1", "1x", "1.2.3", ".5", "99999999999999999999", "1e9", "0x10", "5 MBs"])
    func notSizes(text: String) {
        #expect(ByteSize.parse(text) == nil)
    }

    @Test func sizeFormatting() {
        #expect(ByteSize.format(1000) == "1000 B")
        #expect(ByteSize.format(1536) == "1.5 KiB")
        #expect(ByteSize.format(10 << 20) == "10 MiB")
    }

    @Test func ranges() {
        #expect(ByteRangeSpec.parse("0-99") == .closed(first: 0, last: 99))
        #expect(ByteRangeSpec.parse("100-") == .from(100))
        #expect(ByteRangeSpec.parse("-10") == .suffix(10))
        #expect(ByteRangeSpec.parse("0-99")?.resolve(length: 1000) == 0..<100)
        #expect(ByteRangeSpec.parse("0-99")?.resolve(length: 99) == nil)
        #expect(ByteRangeSpec.parse("0-99")?.resolve(length: nil) == 0..<100)
        #expect(ByteRangeSpec.parse("990-")?.resolve(length: 1000) == 990..<1000)
        #expect(ByteRangeSpec.parse("1000-")?.resolve(length: 1000) == nil)
        #expect(ByteRangeSpec.parse("-10")?.resolve(length: 1000) == 990..<1000)
        #expect(ByteRangeSpec.parse("-5000")?.resolve(length: 1000) == 0..<1000)
        #expect(ByteRangeSpec.parse("-0")?.resolve(length: 1000) == nil)
        for bad in ["", "-", "5", "9-3", "a-b", "1-2-3", "+1-2", " 1-2", "1 -2", "1234567890123456789-"] {
            #expect(ByteRangeSpec.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func expiry() {
        #expect(ExpirySpec.parse("never") == .never)
        #expect(ExpirySpec.parse("90") == .after(90))
        #expect(ExpirySpec.parse("15m") == .after(900))
        #expect(ExpirySpec.parse("2h") == .after(7200))
        #expect(ExpirySpec.parse("7d") == .after(604_800))
        #expect(ExpirySpec.parse("2030-01-01T00:00:00Z") == .at(Date(timeIntervalSince1970: 1_893_456_000)))
        #expect(ExpirySpec.parse("2030-01-01") == .at(Date(timeIntervalSince1970: 1_893_456_000)))
        for bad in ["", "soon", "h", "-5m", "2030-13-01", "5y"] {
            #expect(ExpirySpec.parse(bad) == nil, "\(bad)")
        }
    }

    @Test func jsonRendering() {
        let value = JSONValue.object([
            ("a", .int(1)), ("b", .string("x\"\n\u{1}é")), ("c", .null),
            ("d", .array([.bool(true), .double(1.5), .double(2)])),
        ])
        #expect(value.rendered() == #"{"a":1,"b":"x\"\n\u0001é","c":null,"d":[true,1.5,2]}"#)
        let parsed = try? JSONSerialization.jsonObject(with: Data(value.rendered().utf8)) as? [String: Any]
        #expect(parsed?["b"] as? String == "x\"\n\u{1}é")
    }
}
