import Foundation
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import TestSupport
import Testing

/// A downloaded playlist may name its own origin and what the downloader's
/// ``PlaylistURIRule`` allows: a segment on another loopback port or a key
/// on a link-local address fails the download before anything of the asset
/// is fetched from there.
@Suite("HLS download URIs", .serialized, .timeLimit(.minutes(1)))
struct HLSDownloadURITests {
    static let segment = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 5) })

    private func outcome(_ download: MediaDownload) async -> DownloadError? {
        do {
            try await download.completion()
            return nil
        } catch {
            return error
        }
    }

    private func playlistOrigin(_ text: @escaping @Sendable () -> String) throws -> ScriptedOrigin {
        try ScriptedOrigin { request, reply in
            if request.path.hasSuffix(".m3u8") {
                reply.respond(headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(text().utf8))
            } else {
                reply.serve(Self.segment, for: request)
            }
        }
    }

    @Test func aSegmentOnAnotherLoopbackPortFailsTheDownload() async throws {
        let forbidden = try ScriptedOrigin { request, reply in reply.serve(Self.segment, for: request) }
        defer { forbidden.stop() }
        let elsewhere = forbidden.url("/seg1.ts")
        let origin = try playlistOrigin {
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n#EXTINF:4,\n\(elsewhere)\n#EXT-X-ENDLIST\n"
        }
        defer { origin.stop() }
        let test = try TestCache()
        let url = origin.url("/media.m3u8")
        let error = await outcome(HLSDownloader(cache: test.cache).download(url))
        guard case .uriRefused(let refused, let playlist, let reason)? = error else {
            Issue.record("expected uriRefused, got \(String(describing: error))")
            return
        }
        #expect(refused == elsewhere && playlist == url && reason.contains("loopback"))
        #expect(forbidden.requests.isEmpty)
        #expect(origin.requests.map(\.path) == ["/media.m3u8"])
    }

    @Test func aVariantOnAnotherLoopbackAddressIsRefusedBeforeAnyConnection() async throws {
        let origin = try playlistOrigin {
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nhttp://127.0.0.2:9/latest/index.m3u8\n"
        }
        defer { origin.stop() }
        let test = try TestCache()
        let error = await outcome(HLSDownloader(cache: test.cache).download(origin.url("/master.m3u8")))
        guard case .uriRefused(let refused, _, let reason)? = error else {
            Issue.record("expected uriRefused, got \(String(describing: error))")
            return
        }
        #expect(refused.host == "127.0.0.2" && reason.contains("loopback"))
        // The only request that left went to the master's origin (127.0.0.1).
        #expect(!test.origin.requests.isEmpty && test.origin.requests.allSatisfy { $0.request.url.host == "127.0.0.1" })
    }

    /// URLSession fetches `ftp:` too: a URI that is not `http`/`https` (no
    /// ``WebOrigin``) must not pass the rule as "not fetched through the network".
    @Test func aSegmentOfAnotherSchemeFailsTheDownload() async throws {
        let elsewhere = "ftp://127.0.0.2/seg1.ts"
        let origin = try playlistOrigin {
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n#EXTINF:4,\n\(elsewhere)\n#EXT-X-ENDLIST\n"
        }
        defer { origin.stop() }
        let test = try TestCache()
        let error = await outcome(HLSDownloader(cache: test.cache).download(origin.url("/media.m3u8")))
        guard case .uriRefused(let refused, _, _)? = error else {
            Issue.record("expected uriRefused, got \(String(describing: error))")
            return
        }
        #expect(refused.absoluteString == elsewhere)
        #expect(origin.requests.map(\.path) == ["/media.m3u8"])
        #expect(test.origin.requests.allSatisfy { $0.request.url.scheme == "http" })
    }

    /// A media playlist whose second segment is on another origin (`cdn`),
    /// and a downloader whose rule allows that origin.
    private struct TwoOrigins {
        let cdn: ScriptedOrigin
        let origin: ScriptedOrigin
        let test: TestCache
        let downloader: HLSDownloader

        init(playlistOrigin: (@escaping @Sendable () -> String) throws -> ScriptedOrigin) throws {
            cdn = try ScriptedOrigin { request, reply in reply.serve(HLSDownloadURITests.segment, for: request) }
            let elsewhere = cdn.url("/seg1.ts")
            origin = try playlistOrigin {
                "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n#EXTINF:4,\n\(elsewhere)\n#EXT-X-ENDLIST\n"
            }
            test = try TestCache()
            let port = cdn.port
            downloader = HLSDownloader(
                cache: test.cache, uriRule: PlaylistURIRule { $0.host == "127.0.0.1" && $0.port == port })
        }

        func stop() {
            cdn.stop()
            origin.stop()
        }
    }

    @Test func aRuleThatAllowsTheOtherOriginLetsTheDownloadFinish() async throws {
        let two = try TwoOrigins(playlistOrigin: playlistOrigin)
        defer { two.stop() }
        #expect(await outcome(two.downloader.download(two.origin.url("/media.m3u8"))) == nil)
        #expect(two.cdn.requests.map(\.path) == ["/seg1.ts"])
    }

    /// A download's headers (`hls-get --header "Authorization: …"`) go to the
    /// master's origin only, never to another origin its playlists name.
    @Test func theDownloadsHeadersStayOnTheMastersOrigin() async throws {
        let two = try TwoOrigins(playlistOrigin: playlistOrigin)
        defer { two.stop() }
        let download = two.downloader.download(
            two.origin.url("/media.m3u8"), headers: ["Authorization": "Bearer secret", "X-Api-Key": "k"])
        #expect(await outcome(download) == nil)
        #expect(two.cdn.requests.count == 1)
        #expect(two.cdn.requests.allSatisfy { $0.header("Authorization") == nil && $0.header("X-Api-Key") == nil })
        #expect(two.origin.requests.count == 2)
        #expect(two.origin.requests.allSatisfy { $0.header("Authorization") == "Bearer secret" })
    }
}
