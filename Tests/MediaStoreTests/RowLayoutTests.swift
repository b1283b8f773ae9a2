import Foundation
import Testing

@testable import MediaStore

/// The row layouts of `Format/` byte for byte: they are the on-disk format,
/// so these bytes must never change without a format version.
@Suite struct RowLayoutTests {
    let digest = ContentDigest(high: 0x0102_0304_0506_0708, low: 0x1112_1314_1516_1718)

    @Test func slotIsTheCanonicalDigestThenABigEndianOrdinal() throws {
        let slot = Slot(digest, ordinal: 0x0A0B)
        #expect(slot.bytes == digest.canonicalBytes + [0x0A, 0x0B])
        #expect(slot.ordinal == 0x0A0B)
        #expect(slot.digest == digest)
        #expect(Slot(slot.bytes) == slot)
        #expect(Slot(slot.bytes.dropLast()) == nil)
        #expect(slot.withUnsafeBytes { Array($0) } == slot.bytes)
        #expect(Set([slot, Slot(digest, ordinal: 0x0A0C), Slot(slot.bytes)!]).count == 2)
        #expect(slot.sharesDigest(with: Slot(digest, ordinal: 7).bytes))
        #expect(!slot.sharesDigest(with: Slot(ContentDigest(high: 1, low: 2), ordinal: 0x0A0B).bytes))
    }

    @Test func extentRowIsTheChunkSlotThenALittleEndianLength() throws {
        let row = ExtentRow(chunk: Slot(digest, ordinal: 1), length: 0x0102_0304)
        let bytes = row.encode()
        #expect(bytes == Slot(digest, ordinal: 1).bytes + [0x04, 0x03, 0x02, 0x01])
        #expect(bytes.withUnsafeBytes { ExtentRow($0) } == row)
        #expect(bytes.withUnsafeBytes { ExtentRow.length(in: $0) } == 0x0102_0304)
        #expect(Array(bytes.dropLast()).withUnsafeBytes { ExtentRow($0) } == nil)
    }

    @Test func accessRowIsTheTickThenTheTimeLittleEndian() throws {
        let row = AccessRow(tick: 0x0102_0304_0506_0708, time: 1_700_000_000.25)
        let bytes = row.encode()
        var expected: [UInt8] = [0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01]
        withUnsafeBytes(of: (1_700_000_000.25).bitPattern.littleEndian) { expected += $0 }
        #expect(bytes == expected)
        #expect(bytes.withUnsafeBytes { AccessRow($0) } == row)
        #expect(Array(bytes.prefix(15)).withUnsafeBytes { AccessRow($0) } == nil)
    }

    @Test func referenceCountIsFourBytesLittleEndianAndMalformedMeansNone() throws {
        #expect(ChunkReferences(count: 0x0102_0304).encode() == [0x04, 0x03, 0x02, 0x01])
        #expect(([0x02, 0, 0, 0] as [UInt8]).withUnsafeBytes { ChunkReferences($0) }.count == 2)
        #expect(([0x02, 0, 0] as [UInt8]).withUnsafeBytes { ChunkReferences($0) }.count == 0)
        #expect(ChunkReferences(nil).count == 0)
        #expect(ChunkReferences(count: -3).encode() == [0, 0, 0, 0])
    }

    @Test func chunkValueIsTheHeaderThenThePayload() throws {
        let payload: [UInt8] = [9, 8, 7]
        let header = ChunkHeader(codec: .raw, rawLength: 3, storedLength: 3)
        var value = [UInt8](repeating: 0, count: ChunkValue.size(storedLength: 3))
        value.withUnsafeMutableBytes { out in
            payload.withUnsafeBytes { ChunkValue.write(header, payload: $0, into: out) }
        }
        #expect(value == [0xC4, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 0, 9, 8, 7])
        let decoded = try #require(value.withUnsafeBytes { ChunkValue($0).map { ($0.header, [UInt8]($0.payload)) } })
        #expect(decoded.0 == header)
        #expect(decoded.1 == payload)
        #expect(Array(value.dropLast()).withUnsafeBytes { ChunkValue($0) } == nil)
    }

    @Test func orderedSlotKeysAndExtentKeysDecode() throws {
        let slot = Slot(digest, ordinal: 3)
        let key = StoreKeys.lru(tick: 0x0102, slot: slot)
        #expect(key == [0, 0, 0, 0, 0, 0, 0x01, 0x02] + slot.bytes)
        let decoded = try #require(StoreKeys.orderedSlot(ofKey: key))
        #expect(decoded.order == 0x0102)
        #expect(decoded.slot == slot)
        #expect(StoreKeys.orderedSlot(ofKey: Array(key.dropLast())) == nil)
        let extent = StoreKeys.extent(entryID: 5, index: 0x0102_0304)
        #expect(extent == [0, 0, 0, 0, 0, 0, 0, 5, 0x01, 0x02, 0x03, 0x04])
        #expect(StoreKeys.extentIndex(ofKey: extent) == 0x0102_0304)
        #expect(StoreKeys.extentIndex(ofKey: Array(extent.dropLast())) == nil)
    }
}
