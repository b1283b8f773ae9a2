import Foundation
import Testing

@testable import CacheToolCore
@_spi(Fuzzing) import MediaServer
@_spi(Fuzzing) import MediaStore
@_spi(Fuzzing) import MediaStreaming

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

    /// `Content-Range` and the other response headers, the `Range` header
    /// and content-type sniffing (FuzzHTTP). Some seeds parse.
    @Test func httpCorpus() throws {
        let inputs = try Self.inputs("FuzzHTTP")
        #expect(inputs.count >= 5)
        let parsed = inputs.filter { StreamingFuzzing.parseResponse($0) }.count
        #expect(parsed >= 3, "the seed Content-Range values should parse")
    }

    /// Request heads for MediaServer (FuzzServerRequest): parsing, routing,
    /// Range and conditional planning. The well-formed seeds parse; the
    /// hostile ones (bare CR, folding, HTTP/2, a body, an over-long target) do not.
    @Test func serverRequestCorpus() throws {
        let inputs = try Self.inputs("FuzzServerRequest")
        #expect(inputs.count >= 10)
        let parsed = inputs.filter { ServerFuzzing.parseRequest($0) }.count
        #expect(parsed >= 8 && parsed < inputs.count, "\(parsed) of \(inputs.count) seeds parsed")
    }

    /// Arbitrary bytes as `data.mdb` (FuzzStoreFile). The checks before
    /// mapping run here for every input, and a file they refuse must be
    /// refused by opening too. A file they pass is opened only in a child
    /// process: `cachetool verify` (which itself walks the store in a
    /// grandchild) must end with 0, 1 or 3, never by a signal.
    @Test func storeFileCorpus() throws {
        let inputs = try Self.inputs("FuzzStoreFile")
        #expect(inputs.count >= 5)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-replay-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var passed = 0
        for input in inputs {
            let verdict = StoreFuzzing.checkStoreFile(input, directory: directory)
            guard verdict == .passes else {
                StoreFuzzing.openStoreFile(verdict: verdict, directory: directory)
                continue
            }
            passed += 1
            let result = try ToolProcess.cachetool(["verify", "--store", directory.path, "--json"])
            #expect(!result.signaled && [0, 1, 3].contains(result.status), "cachetool verify: \(result.status) \(result.errors)")
        }
        #expect(passed >= 2, "the seed stores should pass the checks")
    }
}

