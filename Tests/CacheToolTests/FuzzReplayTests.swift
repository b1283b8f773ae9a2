import Foundation
import Testing

@testable import CacheToolCore
@_spi(Fuzzing) import MediaStore

/// Replays the committed libFuzzer corpora and crash reproducers
/// (Tests/CacheToolTests/Fuzz/<target>/) through the same entry points
/// the fuzz targets in FuzzTesting/ call, so a fixed crash stays fixed.
@Suite struct FuzzReplayTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz")

    static func inputs(_ target: String) throws -> [[UInt8]] {
        let directory = root.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map { [UInt8](try Data(contentsOf: directory.appendingPathComponent($0))) }
    }

    @Test func argumentCorpus() throws {
        let inputs = try Self.inputs("FuzzArguments")
        #expect(inputs.count >= 10)
        let parsed = inputs.filter { CacheToolFuzzing.parseArguments($0) }.count
        #expect(parsed >= 10, "the seed command lines should parse")
    }

    @Test func recordCorpus() throws {
        let inputs = try Self.inputs("FuzzRecords")
        #expect(!inputs.isEmpty)
        for input in inputs {
            guard let selector = input.first else { continue }
            let body = Array(input.dropFirst())
            switch selector % 3 {
            case 0: StoreFuzzing.decodeRecord(body)
            case 1: StoreFuzzing.decodeCounters(body)
            default: StoreFuzzing.sniff(body)
            }
        }
    }

    @Test func chunkCorpus() throws {
        let inputs = try Self.inputs("FuzzChunks")
        #expect(!inputs.isEmpty)
        for input in inputs { StoreFuzzing.decodeChunk(input) }
    }
}
