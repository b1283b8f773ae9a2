import Foundation
import Testing

@testable import MediaCache

@Suite struct ExpiryTests {
    @Test func neverIsUpstreamConstant() {
        #expect(Expiry.never.date == Date(timeIntervalSince1970: 60 * 60 * 24 * 365 * 68))
        let components = Calendar(identifier: .gregorian).dateComponents(
            in: TimeZone(identifier: "UTC")!, from: Expiry.never.date)
        #expect(components.year == 2037 && components.month == 12 && components.day == 15)
        #expect(!Expiry.never.isExpired)
    }

    @Test func secondsAndDate() {
        #expect(!Expiry.seconds(10).isExpired)
        #expect(Expiry.seconds(-1).isExpired)
        let date = Date(timeIntervalSinceNow: -5)
        #expect(Expiry.date(date).date == date)
        #expect(Expiry.date(date).isExpired)
        #expect(abs(Expiry.seconds(100).date.timeIntervalSinceNow - 100) < 1)
    }
}

@Suite struct TransformerTests {
    @Test func codableEnvelopeMatchesUpstream() throws {
        let transformer = TransformerFactory.forCodable(ofType: User.self)
        let data = try transformer.toData(User(firstName: "John", lastName: "Snow"))
        let json = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let object = json?["object"] as? [String: Any]
        #expect(object?["firstName"] as? String == "John")
        // Bytes as hyperoslo/Cache's Codable transformer writes them decode.
        let upstream = Data(#"{"object":{"firstName":"Arya","lastName":"Stark"}}"#.utf8)
        #expect(try transformer.fromData(upstream) == User(firstName: "Arya", lastName: "Stark"))
        let int = TransformerFactory.forCodable(ofType: Int.self)
        #expect(try int.fromData(Data(#"{"object":42}"#.utf8)) == 42)
    }

    @Test func dataIsIdentity() throws {
        let bytes = Data([1, 2, 3])
        let transformer = TransformerFactory.forData()
        #expect(try transformer.toData(bytes) == bytes)
        #expect(try transformer.fromData(bytes) == bytes)
    }

    @Test func keyCoderRoundTrips() {
        #expect(KeyCoder.encode("https://a/b.mp3?t=1") == "https://a/b.mp3?t=1")
        #expect(KeyCoder.decode("42", as: Int.self) == 42)
        #expect(KeyCoder.encode(42) == "42")
        let url = URL(string: "https://example.com/track.mp3?sig=abc")!
        #expect(KeyCoder.decode(KeyCoder.encode(url), as: URL.self) == url)
        let uuid = UUID()
        #expect(KeyCoder.decode(KeyCoder.encode(uuid), as: UUID.self) == uuid)
    }
}

@Suite struct HelperTests {
    @Test func md5Vectors() {
        #expect(MD5("") == "D41D8CD98F00B204E9800998ECF8427E")
        #expect(MD5("a") == "0CC175B9C0F1B6A831C399E269772661")
        #expect(MD5("The quick brown fox jumps over the lazy dog") == "9E107D9D372BB6826BD81D3542A419D6")
        #expect(MD5(String(repeating: "x", count: 200)).count == 32)
        #expect(
            MD5("12345678901234567890123456789012345678901234567890123456789012345678901234567890")
                == "57EDF4A22BE3C955AC49DA2E2107B67A")
    }

    @Test func jsonWrappersRoundTrip() throws {
        let transformer = TransformerFactory.forCodable(ofType: JSONDictionaryWrapper.self)
        let data = try transformer.toData(JSONDictionaryWrapper(jsonDictionary: ["name": "Oslo", "size": 3]))
        let back = try transformer.fromData(data).jsonDictionary
        #expect(back["name"] as? String == "Oslo")
        let arrays = TransformerFactory.forCodable(ofType: JSONArrayWrapper.self)
        let array = try arrays.fromData(try arrays.toData(JSONArrayWrapper(jsonArray: [["a": 1], ["b": 2]])))
        #expect(array.jsonArray.count == 2)
        #expect(throws: StorageError.notFound) { try Optional<Int>.none.unwrapOrThrow(error: StorageError.notFound) }
    }
}
