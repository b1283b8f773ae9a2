import Foundation
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// `HLSDownloader.release(_:)` finds the asset's running downloads by the
/// asset key's bytes, as the store keeps keys apart: two assets whose keys
/// are canonically equal strings but different bytes are two assets.
@Suite("HLS release matches the asset key byte for byte", .serialized, .timeLimit(.minutes(1)))
struct HLSReleaseExactKeyTests {
    @Test("Releasing the asset keyed \"café\" (decomposed) leaves the download of \"café\" (one scalar) running")
    func releaseKeepsTheOtherNormalization() async throws {
        let origin = try HLSOrigin()
        // The master playlist's key ends in the query's form of "café";
        // every other resource is keyed by its URL.
        let policy = CacheKeyPolicy { url in
            switch url.query {
            case "form=nfc": "asset-caf\u{E9}"
            case "form=nfd": "asset-cafe\u{301}"
            default: url.absoluteString
            }
        }
        let test = try TestCache(
            configuration: StreamingConfiguration(
                cacheKeyPolicy: policy, chunksPerRequest: 2, stallTimeout: .seconds(2)))
        let downloader = HLSDownloader(cache: test.cache)
        let gate = AsyncGate()
        let hooks = DownloadRunHooks()
        hooks.result.withLock { $0 = { await gate.pass() } }
        let master = origin.url("master/master.m3u8")
        func url(_ form: String) throws -> URL {
            var components = try #require(URLComponents(url: master, resolvingAgainstBaseURL: false))
            components.query = "form=" + form
            return try #require(components.url)
        }
        let composed = downloader.download(
            try url("nfc"), variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .none, headers: [:],
            priority: .download, hooks: hooks)
        let decomposed = downloader.download(
            try url("nfd"), variant: .lowestBandwidth, audio: .languages(["en"]), subtitles: .none, headers: [:],
            priority: .download, hooks: hooks)
        #expect(composed.key == "asset-caf\u{E9}" && decomposed.key == "asset-cafe\u{301}")
        #expect(!composed.key.utf8.elementsEqual(decomposed.key.utf8))
        await gate.arrived(2)

        try await downloader.release(try url("nfd"))
        #expect(decomposed.state == .cancelled)
        #expect(composed.state != .cancelled, "releasing the decomposed asset cancelled the composed one")
        let left = downloader.downloads.map { Array($0.key.utf8) }
        #expect(left == [Array("asset-caf\u{E9}".utf8)])

        gate.open()
        try await composed.completion()
        #expect(composed.state == .completed)
    }
}
