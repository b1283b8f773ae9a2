import Foundation
import Testing

@testable import MediaStore

/// Point 5: zstd per chunk; raw when it saves < ~3% or the bytes are
/// already-compressed media.
@Suite(.disabled(if: TestStore.encryptsByDefault, "an encrypted store does not compress its chunks"))
struct CompressionTests {
    static let header = ChunkHeader.size

    /// About 1 MB of highly compressible text.
    static let sampleText: [UInt8] = {
        let line = Array("The quick brown fox jumps over the lazy dog. 0123456789\n".utf8)
        var text = [UInt8]()
        text.reserveCapacity(1_000_000 + line.count)
        while text.count < 1_000_000 { text.append(contentsOf: line) }
        return Array(text[..<1_000_000])
    }()

    static func text() -> [UInt8] { sampleText }

    static func chunks(_ count: Int) -> Int {
        (count + StoreConfiguration.defaultChunkSize - 1) / StoreConfiguration.defaultChunkSize
    }

    /// The stored size of `count` bytes kept raw in default-size chunks:
    /// each chunk value holds a header, a block digest table (format 3)
    /// and the bytes.
    static func rawStoredSize(_ count: Int, chunkSize: Int = StoreConfiguration.defaultChunkSize) -> Int {
        stride(from: 0, to: count, by: chunkSize).reduce(0) { total, start in
            let length = min(chunkSize, count - start)
            return total + ChunkValue.size(ChunkValue.header(codec: .raw, rawLength: length, storedLength: length))
        }
    }

    /// Stores `value` three ways (put, writer, sparse) under fresh keys and
    /// returns the stored bytes each added.
    static func storedSizes(
        of value: [UInt8], configuration: StoreConfiguration = StoreConfiguration(initialMapSize: 64 << 20)
    ) throws -> [Int] {
        var sizes: [Int] = []
        for way in 0..<3 {
            let t = try TestStore(configuration: configuration)
            switch way {
            case 0:
                try t.store.put(value, forKey: "k")
            case 1:
                let writer = try t.store.makeWriter(forKey: "k")
                try writer.append(value[..<(value.count / 3)])
                try writer.append(value[(value.count / 3)...])
                try writer.finish()
            default:
                let chunk = t.store.configuration.chunkSize
                let version = try t.store.prepareEntry(forKey: "k", length: value.count).version
                for start in stride(from: 0, to: value.count, by: chunk) {
                    try t.store.write(
                        value[start..<min(value.count, start + chunk)], at: start, forKey: "k", version: version)
                }
            }
            #expect(try t.store.data(forKey: "k") == Data(value), "way \(way)")
            #expect(try t.store.verify().isClean, "way \(way)")
            sizes.append(try t.store.statistics().storedBytes)
        }
        return sizes
    }

    @Test func compressibleDataIsStoredSmall() throws {
        let value = Self.text()
        for stored in try Self.storedSizes(of: value) {
            #expect(stored < value.count / 10, "stored \(stored) of \(value.count)")
        }
    }

    @Test func randomDataIsStoredRaw() throws {
        var generator = SplitMix64(seed: 51)
        let value = generator.bulkBytes(1_000_000)
        for stored in try Self.storedSizes(of: value) {
            #expect(stored == Self.rawStoredSize(value.count))
        }
    }

    @Test func compressionLevelZeroStoresRaw() throws {
        let value = Self.text()
        let configuration = StoreConfiguration(compressionLevel: 0, initialMapSize: 64 << 20)
        for stored in try Self.storedSizes(of: value, configuration: configuration) {
            #expect(stored == Self.rawStoredSize(value.count))
        }
    }

    @Test(arguments: [
        Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0],  // ID3-tagged MP3
        [0, 0, 0, 0x20] + Array("ftypM4A ".utf8),  // MP4 audio
        [0, 0, 0, 0x18] + Array("ftypisom".utf8),  // MP4 video
        Array("fLaC".utf8),
        Array("OggS".utf8),
        [0x47, 0x40, 0x00, 0x10],  // MPEG-TS (an HLS segment), its first packet the PAT
        [0, 0, 0, 0x18] + Array("stypmsdh".utf8),  // fMP4 media segment (HLS/CMAF)
        [0, 0, 0, 0x60] + Array("moof".utf8),  // fMP4 fragment without styp
    ])
    func compressedMediaSkipsCompression(magic: [UInt8]) throws {
        let value = magic + Self.text()
        for stored in try Self.storedSizes(of: value) {
            #expect(stored == Self.rawStoredSize(value.count))
        }
    }

    @Test func mpegTSIsSniffedAndTextStartingWithGIsNot() {
        #expect(MediaSniffer.mimeType(of: [0x47, 0x40, 0x00, 0x10, 0x00]) == "video/mp2t")
        #expect(MediaSniffer.mimeType(of: Array("GET / HTTP/1.1".utf8)) == nil)
        #expect(MediaSniffer.mimeType(of: Array("G@ttributes".utf8)) == nil)
        #expect(!MediaSniffer.isCompressedMedia(Array("Good morning".utf8)))
    }

    @Test func waveAudioIsStillCompressed() throws {
        let value = Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8) + Self.text()
        for stored in try Self.storedSizes(of: value) {
            #expect(stored < value.count / 10)
        }
    }

    /// A chunk that would shrink by under ~3% is kept raw; one that shrinks
    /// by ~10% is compressed.
    @Test func smallSavingsAreNotWorthIt() throws {
        var generator = SplitMix64(seed: 52)
        let barely = generator.bulkBytes(98_500) + [UInt8](repeating: 0, count: 1_500)
        #expect(try Self.storedSizes(of: barely) == [Int](repeating: Self.rawStoredSize(barely.count), count: 3))

        let worth = generator.bulkBytes(90_000) + [UInt8](repeating: 0, count: 10_000)
        for stored in try Self.storedSizes(of: worth) {
            #expect(stored < worth.count * 95 / 100)
            #expect(stored > worth.count * 85 / 100)
        }
    }
}

/// An entry whose first chunk does not compress is not tried again.
@Suite(.disabled(if: TestStore.encryptsByDefault, "an encrypted store does not compress its chunks"))
struct AdaptiveCompressionTests {
    @Test func chunksAfterAnIncompressibleOneAreStoredRawUntried() throws {
        let chunk = 4096
        let t = try TestStore(configuration: StoreConfiguration(chunkSize: chunk, initialMapSize: 16 << 20))
        var generator = SplitMix64(seed: 5)
        // Random first chunk, then three different, highly compressible ones.
        let value = generator.bytes(chunk) + (0..<3).flatMap { [UInt8](repeating: UInt8(65 + $0), count: chunk) }
        try t.store.put(value, forKey: "whole")
        let stats = try t.store.statistics()
        #expect(stats.storedBytes == value.count + 4 * ChunkHeader.size)  // 4096-byte chunks: one block, no table
        // The same bytes starting with the compressible part do compress.
        try t.store.removeAll()
        try t.store.put(Array(value[chunk...]) + Array(value[..<chunk]), forKey: "whole")
        #expect(try t.store.statistics().storedBytes < 2 * chunk)
        #expect(try t.store.data(forKey: "whole") == Data(Array(value[chunk...]) + Array(value[..<chunk])))
    }
}
