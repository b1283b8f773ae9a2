import Foundation
import FuzzSupport
import Testing

@testable import CacheToolCore

/// Replays the committed libFuzzer corpora and crash reproducers
/// (Tests/CacheToolTests/Fuzz/<target>/) through the same entry points
/// the fuzz targets in FuzzTesting/ call, so a fixed crash stays fixed.
/// An input whose checks fail is a test failure naming its file; the
/// other inputs still run.
@Suite struct FuzzReplayTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fuzz")

    struct Input {
        let name: String
        let bytes: [UInt8]
    }

    static func inputs(_ target: String) throws -> [Input] {
        let directory = root.appendingPathComponent(target)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        return try names.map {
            Input(name: "\(target)/\($0)", bytes: [UInt8](try Data(contentsOf: directory.appendingPathComponent($0))))
        }
    }

    /// Runs `body` on `input`; a ``FuzzFailure`` is recorded against the
    /// input's file. Returns what `body` returned, `nil` when it failed.
    @discardableResult
    static func replay<R>(_ input: Input, _ body: ([UInt8]) throws(FuzzFailure) -> R) -> R? {
        do {
            return try body(input.bytes)
        } catch {
            Issue.record("\(input.name): \(error)")
            return nil
        }
    }

    @Test func argumentCorpus() throws {
        let inputs = try Self.inputs("FuzzArguments")
        #expect(inputs.count >= 10)
        let parsed = inputs.filter { Self.replay($0, CacheToolFuzzing.parseArguments) == true }.count
        #expect(parsed >= 10, "the seed command lines should parse")
    }

    @Test func recordCorpus() throws {
        let inputs = try Self.inputs("FuzzRecords")
        #expect(!inputs.isEmpty)
        for input in inputs {
            Self.replay(input) { bytes throws(FuzzFailure) in
                guard let selector = bytes.first else { return }
                let body = Array(bytes.dropFirst())
                switch selector % 3 {
                case 0: try StoreFuzzing.decodeRecord(body)
                case 1: StoreFuzzing.decodeCounters(body)
                default: StoreFuzzing.sniff(body)
                }
            }
        }
    }

    @Test func keyFileCorpus() throws {
        let inputs = try Self.inputs("FuzzKeyFile")
        var parsed: [String] = []
        var rows: [String] = []
        for input in inputs {
            if Self.replay(input, StoreFuzzing.parseKeyFile) == true { parsed.append(input.name) }
            if Self.replay(input, StoreFuzzing.openSealed) == true { rows.append(input.name) }
        }
        #expect(
            Set(parsed).isSuperset(
                of: ["raw-key", "hex-key", "hex-key-lf", "hex-key-crlf"].map { "FuzzKeyFile/\($0)" }))
        #expect(!parsed.contains("FuzzKeyFile/not-hex") && !parsed.contains("FuzzKeyFile/short"))
        #expect(rows.contains("FuzzKeyFile/encryption-row"))
    }

    /// An encrypted store's `rekey` meta row (FuzzRekeyRow): the
    /// well-formed seeds decode (and re-encode to their bytes); a cursor
    /// too long, a cursor length that disagrees with the row's, an
    /// unknown phase or scheme, a short row do not.
    @Test func rekeyRowCorpus() throws {
        let inputs = try Self.inputs("FuzzRekeyRow")
        #expect(inputs.count >= 10)
        let decoded = Set(inputs.filter { Self.replay($0, StoreFuzzing.decodeRekeyRow) == true }.map(\.name))
        #expect(
            decoded
                == Set(
                    ["staging-empty-cursor", "entries-slot-cursor", "staging-longest-cursor"].map {
                        "FuzzRekeyRow/\($0)"
                    }
                ))
    }

    @Test func chunkCorpus() throws {
        let inputs = try Self.inputs("FuzzChunks")
        #expect(!inputs.isEmpty)
        for input in inputs {
            StoreFuzzing.decodeChunk(input.bytes)
            try StoreFuzzing.decodePack(input.bytes)
        }
        // A pack row of format 4 (two values, directory after the payload) decodes as one.
        let pack = try #require(inputs.first { $0.name == "FuzzChunks/28de6087078f9cc7d2c8318d9faa72484eee8dd3" })
        #expect(try StoreFuzzing.decodePack(pack.bytes))
        // Two seeds of format 3: a raw chunk of 20,000 bytes with its two
        // block digests (made with `xxhsum -H3`), and the same with the
        // second digest zeroed, refused.
        let decoded = Dictionary(uniqueKeysWithValues: inputs.map { ($0.name, StoreFuzzing.decodeChunk($0.bytes)) })
        #expect(decoded["FuzzChunks/dd2d6ed6b2fff4df1f6560f1040baa0328553fa6"] == true)
        #expect(decoded["FuzzChunks/343ac46c635e39e3fe1056d4df1242b64fd51002"] == false)
    }

    /// `Content-Range` and the other response headers, the `Range` header
    /// and content-type sniffing (FuzzHTTP). Some seeds parse.
    @Test func httpCorpus() throws {
        let inputs = try Self.inputs("FuzzHTTP")
        #expect(inputs.count >= 5)
        let parsed = inputs.filter { Self.replay($0, StreamingFuzzing.parseResponse) == true }.count
        #expect(parsed >= 3, "the seed Content-Range values should parse")
    }

    /// A failed check is reported against the input, not a trap: the
    /// mechanism the corpus tests rely on.
    @Test func aFailedCheckIsATestFailureNamingTheInput() {
        withKnownIssue {
            _ = Self.replay(Input(name: "Example/input-1", bytes: [1])) { _ throws(FuzzFailure) in
                throw FuzzFailure("example")
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("Example/input-1: example") }
        }
    }

    /// M3U8 playlists (FuzzPlaylist): the fixtures' playlists and samples
    /// of every tag parse and keep the selection, planning and rewriting
    /// invariants; the broken seeds give typed errors.
    @Test func playlistCorpus() throws {
        let inputs = try Self.inputs("FuzzPlaylist")
        #expect(inputs.count >= 15)
        let parsed = inputs.filter { Self.replay($0, StreamingFuzzing.parsePlaylist) == true }.count
        #expect(parsed >= 12, "the fixture and sample playlists should parse")
        #expect(parsed <= inputs.count - 9, "the broken seeds should not parse")
    }

    /// Request heads for MediaServer (FuzzServerRequest): parsing, routing,
    /// Range and conditional planning. The well-formed seeds parse; the
    /// hostile ones (bare CR, folding, HTTP/2, a body, an over-long target) do not.
    @Test func serverRequestCorpus() throws {
        let inputs = try Self.inputs("FuzzServerRequest")
        #expect(inputs.count >= 10)
        let parsed = inputs.filter { Self.replay($0, ServerFuzzing.parseRequest) == true }.count
        #expect(parsed >= 8 && parsed < inputs.count, "\(parsed) of \(inputs.count) seeds parsed")
    }

    /// `Range` values (FuzzRange): 64-bit boundaries, numbers beyond 64
    /// bits, many ranges; the valid seeds parse, the malformed ones do not.
    @Test func rangeCorpus() throws {
        let inputs = try Self.inputs("FuzzRange")
        #expect(inputs.count >= 10)
        let parsed = inputs.filter { Self.replay($0, ServerFuzzing.planRange) == true }.count
        #expect(parsed >= 8 && parsed < inputs.count, "\(parsed) of \(inputs.count) seeds parsed")
    }

    /// Background task responses (FuzzTransferResponse): the well-formed
    /// seeds are accepted, the short, shifted, backwards and oversized ones refused.
    @Test func transferResponseCorpus() throws {
        let inputs = try Self.inputs("FuzzTransferResponse")
        #expect(inputs.count >= 10)
        let accepted = inputs.filter { Self.replay($0, TransferFuzzing.checkResponse) == true }.map(\.name)
        #expect(
            Set(accepted)
                == Set(
                    ["partial-ok", "partial-at-end", "partial-unknown-total", "whole-ok"].map {
                        "FuzzTransferResponse/\($0)"
                    }))
    }

    /// Hosts (FuzzHost): every numeric form of an internal address is
    /// classed internal; public names and addresses stay public.
    @Test func hostCorpus() throws {
        let inputs = try Self.inputs("FuzzHost")
        #expect(inputs.count >= 10)
        let publicHosts = inputs.filter { Self.replay($0, HostFuzzing.classify) == true }.count
        #expect(publicHosts >= 3 && publicHosts < inputs.count, "\(publicHosts) of \(inputs.count) seeds public")
    }

    /// Arbitrary bytes as `data.mdb` (FuzzStoreFile). The checks before
    /// mapping run here for every input, and a file they refuse must be
    /// refused by opening too. A file they pass is opened only in a child
    /// process: `cachetool verify` (which itself walks the store in a
    /// grandchild) must end with 0, 1 or 3, never by a signal.
    @Test func storeFileCorpus() async throws {
        let inputs = try Self.inputs("FuzzStoreFile")
        #expect(inputs.count >= 5)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fuzz-replay-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var passed = 0
        for input in inputs {
            guard
                let verdict = Self.replay(
                    input,
                    { bytes throws(FuzzFailure) in
                        try StoreFuzzing.checkStoreFile(bytes, directory: directory)
                    })
            else { continue }
            guard verdict == .passes else {
                Self.replay(input) { _ throws(FuzzFailure) in
                    try StoreFuzzing.openStoreFile(verdict: verdict, directory: directory)
                }
                continue
            }
            passed += 1
            let result = try await ToolProcess.cachetool(["verify", "--store", directory.path, "--json"])
            #expect(
                !result.signaled && [0, 1, 3].contains(result.status),
                "\(input.name): cachetool verify: \(result.status) \(result.errors)")
        }
        #expect(passed >= 2, "the seed stores should pass the checks")
    }

    /// cachetool import's manifest.json (FuzzImportManifest): every seed
    /// keeps the properties; a valid-* seed is accepted with no entry
    /// error, a hostile-* one is refused whole or has entry errors.
    @Test func importManifestCorpus() throws {
        let inputs = try Self.inputs("FuzzImportManifest")
        #expect(inputs.count >= 20)
        var valid = 0
        for input in inputs {
            guard Self.replay(input, CacheToolFuzzing.parseImportManifest) != nil else { continue }
            let manifest = try? ImportManifest(Data(input.bytes))
            if input.name.contains("/valid-") {
                valid += 1
                #expect(manifest?.errors == [], "\(input.name)")
            } else if input.name.contains("/hostile-") {
                #expect(manifest.map { !$0.errors.isEmpty } ?? true, "\(input.name) was accepted")
            }
        }
        #expect(valid >= 4)
        let full = try #require(inputs.first { $0.name.hasSuffix("/valid-full.json") })
        #expect(try ImportManifest(Data(full.bytes)).entries.map(\.cost) == [7, 0])
    }
}
