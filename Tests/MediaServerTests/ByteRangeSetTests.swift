import HLSPlaylist
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
}
