import Foundation
import HLSPlaylist
import LoopbackNginx
import MediaStore
import MediaStreaming
import TestSupport
import Testing

@testable import MediaServer

#if canImport(Glibc)
    import Glibc
#endif

/// What HLS through the server holds per request: a segment is sent from
/// the store in bounded pieces, a playlist over its limits is refused
/// (502 with the reason), and the rewritten playlists kept stay within
/// their byte budget.
@Suite("Hostile origin: HLS server memory", .serialized, .timeLimit(.minutes(1)))
struct HLSServerMemoryTests {
    /// A server over a fresh store whose origin is an `HTTPOrigin`, as
    /// `cachetool serve`'s is, with a timeout no other suite uses: a
    /// URLSession of its own (origins share one per timeout), whose
    /// connections to 127.0.0.1 no other suite's transfers hold.
    final class Fixture: @unchecked Sendable {
        let directory: URL
        let store: MediaStore
        let server: MediaServer

        init(configuration: MediaServerConfiguration = MediaServerConfiguration(), limits: HLSLimits = HLSLimits())
            throws
        {
            signal(SIGPIPE, SIG_IGN)
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-memory-\(UUID().uuidString)")
            store = try MediaStore(
                directory: directory, configuration: StoreConfiguration(chunkSize: 64 << 10, initialMapSize: 64 << 20))
            let cache = StreamingCache(
                store: store, origin: HTTPOrigin(timeout: .seconds(5.25)),
                configuration: StreamingConfiguration(retryPolicy: RetryPolicy(maxRetries: 0), hlsLimits: limits))
            server = MediaServer(cache: cache, configuration: configuration)
            try server.start()
        }

        deinit {
            server.stop()
            try? FileManager.default.removeItem(at: directory)
        }

        /// The path of the local URL of `route`.
        func path(_ route: HLSRoute) -> String {
            let url = server.localURL(for: route)
            return url.path + (url.query.map { "?\($0)" } ?? "")
        }
    }

    /// One GET of `path`: the status, the head, and the body bytes (each
    /// piece given to `check` with its offset, then dropped unless `keep`).
    static func get(
        _ path: String, port: Int, keep: Bool = true, check: @escaping @Sendable (Data, Int) -> Void = { _, _ in }
    ) async throws -> (status: Int, head: String, body: Data, length: Int) {
        try await offPool {
            let client = try RawClient(port: port)
            // Longer than RawClient's 10 s: a debug build under the whole test run can take that long.
            var timeout = timeval(tv_sec: 45, tv_usec: 0)
            setsockopt(client.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
            var received = Data()
            var head: String?
            var body = Data()
            var length = 0
            var buffer = [UInt8](repeating: 0, count: 256 << 10)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(client.descriptor, $0.baseAddress, $0.count, 0) }
                if count <= 0 { break }
                var piece = Data(buffer[0..<count])
                if head == nil {
                    received.append(piece)
                    guard let end = received.range(of: Data("\r\n\r\n".utf8)) else { continue }
                    head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                    piece = Data(received[end.upperBound...])
                    received = Data()
                }
                check(piece, length)
                length += piece.count
                if keep { body.append(piece) }
            }
            let text = head ?? ""
            return (RawClient.status(text) ?? 0, text, body, length)
        }
    }

    static func media(segments: Int) -> String {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:5\n#EXT-X-PLAYLIST-TYPE:VOD\n"
        for index in 0..<segments { text += "#EXTINF:5.0,\nsegment\(index).ts\n" }
        return text + "#EXT-X-ENDLIST\n"
    }

    @Test("A playlist over the segment limit gets a 502 naming the limit; one at the limit is served")
    func playlistOverTheLimit() async throws {
        // A debug build parses 20,000 segments (the default) in seconds: a smaller limit keeps the test short.
        let limit = 2_000
        let atLimit = Data(Self.media(segments: limit).utf8)
        let over = Data(Self.media(segments: limit + 1).utf8)
        let origin = try ScriptedOrigin { request, reply in
            reply.respond(body: request.path == "/over.m3u8" ? over : atLimit)
        }
        defer { origin.stop() }
        let fixture = try Fixture(limits: HLSLimits(playlist: PlaylistLimits(maxSegments: limit)))
        let port = try #require(fixture.server.port)
        let refused = try await Self.get(
            fixture.path(HLSRoute(origin: origin.url("/over.m3u8"), kind: .mediaPlaylist)), port: port)
        #expect(refused.status == 502)
        let reason = String(decoding: refused.body, as: UTF8.self)
        #expect(reason.contains("too large: more than \(limit) segments"), "\(reason)")
        let served = try await Self.get(
            fixture.path(HLSRoute(origin: origin.url("/at.m3u8"), kind: .mediaPlaylist)), port: port)
        #expect(served.status == 200)
        #expect(String(decoding: served.body, as: UTF8.self).components(separatedBy: "#EXTINF").count == limit + 1)
    }

    @Test(
        "Nine requests for three route variants of a 20,000-segment playlist keep the rewrite cache within its budget")
    func rewriteCacheBudget() async throws {
        let playlist = Data(Self.media(segments: 20_000).utf8)
        let origin = try ScriptedOrigin { _, reply in reply.respond(body: playlist) }
        defer { origin.stop() }
        let fixture = try Fixture()
        let port = try #require(fixture.server.port)
        let types: [Rendition.MediaType?] = [nil, .audio, .subtitles]
        let (_, growth) = try await ResidentMemory.peakGrowth {
            for index in 0..<9 {
                let route = HLSRoute(origin: origin.url("/p.m3u8"), kind: .mediaPlaylist, mediaType: types[index / 3])
                let answer = try await Self.get(fixture.path(route), port: port, keep: false)
                #expect(answer.status == 200)
            }
        }
        let budget = MediaServerConfiguration().hlsRewriteCacheBytes
        let cache = fixture.server.hls.rewrites
        print("rewrite cache: \(cache.count) entries, \(cache.bytes) bytes of \(budget); growth \(growth >> 20) MiB")
        #expect(cache.bytes <= budget && cache.count >= 1)
        // The process's growth: alone 25-30 MiB; up to 160 MiB measured
        // with every suite running beside it (their memory counts too).
        #expect(growth < 256 << 20, "grew by \(growth >> 20) MiB")
    }

    @Test("Four 20 MiB segments at once are served byte-exact from the store in pieces, never held whole")
    func segmentsServedInPieces() async throws {
        let length = 20 << 20
        let origin = try ScriptedOrigin { request, reply in
            let seed = UInt64(request.path.filter(\.isNumber)) ?? 0
            guard reply.head(status: 200, headers: ["Content-Length": "\(length)"]) else { return }
            var offset = 0
            while offset < length {
                let count = min(1 << 20, length - offset)
                guard reply.send(SelfDescribingBytes.bytes(offset..<offset + count, seed: seed)) else { return }
                offset += count
            }
        }
        defer { origin.stop() }
        let fixture = try Fixture()
        let port = try #require(fixture.server.port)
        let paths = (0..<4).map { fixture.path(HLSRoute(origin: origin.url("/s\($0).ts"), kind: .segment)) }
        // Fetched into the store first (HLSResourceLimitTests bounds that part).
        for path in paths { #expect(try await Self.get(path, port: port, keep: false).length == length) }
        #expect(origin.requests.count == 4)
        let (answers, growth) = try await ResidentMemory.peakGrowth {
            try await withThrowingTaskGroup(of: (Int, Int, Bool).self) { group in
                for (index, path) in paths.enumerated() {
                    group.addTask {
                        let mismatches = Mismatches()
                        let answer = try await Self.get(path, port: port, keep: false) { piece, offset in
                            if !SelfDescribingBytes.matches(piece, at: offset, seed: UInt64(index)) { mismatches.add() }
                        }
                        return (answer.status, answer.length, mismatches.none)
                    }
                }
                var all: [(Int, Int, Bool)] = []
                for try await answer in group { all.append(answer) }
                return all
            }
        }
        for (status, received, exact) in answers {
            #expect(status == 200 && received == length && exact)
        }
        // Read whole and copied into the response, four segments are 160 MiB and more.
        print("four 20 MiB segments from the store: growth \(growth >> 20) MiB")
        #expect(origin.requests.count == 4)
        #expect(growth < 40 << 20, "grew by \(growth >> 20) MiB")
    }

    @Test("The origins minted stay within mintedURLBytes: the oldest are forgotten, the latest allowed")
    func mintedOriginsAreBounded() throws {
        let fixture = try Fixture(configuration: MediaServerConfiguration(mintedURLBytes: 4096))
        let urls = (0..<1000).map { URL(string: "https://cdn.example.com/asset/segment\($0).ts")! }
        for url in urls { _ = fixture.server.localURL(for: HLSRoute(origin: url, kind: .segment)) }
        #expect(fixture.server.permissions.mintedBytes <= 4096)
        #expect(fixture.server.permissions.isAllowed(urls[999]))
        #expect(!fixture.server.permissions.isAllowed(urls[0]))
    }

    @Test("A playlist served again from the rewrite cache mints its URIs again, after they were forgotten")
    func rewriteCacheHitMintsAgain() async throws {
        let playlist = Data(Self.media(segments: 3).utf8)
        let origin = try ScriptedOrigin { _, reply in reply.respond(body: playlist) }
        defer { origin.stop() }
        let fixture = try Fixture(configuration: MediaServerConfiguration(mintedURLBytes: 4096))
        let port = try #require(fixture.server.port)
        let route = HLSRoute(origin: origin.url("/p.m3u8"), kind: .mediaPlaylist)
        let segment = origin.url("/segment0.ts")
        #expect(try await Self.get(fixture.path(route), port: port).status == 200)
        #expect(fixture.server.permissions.isAllowed(segment))
        // Other playlists' URIs are minted meanwhile: this one's are forgotten.
        for index in 0..<1000 {
            _ = fixture.server.localURL(
                for: HLSRoute(origin: URL(string: "https://cdn.example.com/s\(index).ts")!, kind: .segment))
        }
        #expect(!fixture.server.permissions.isAllowed(segment))
        // Served again (the same bytes: its rewriting is kept), its segments play again.
        #expect(try await Self.get(fixture.path(route), port: port).status == 200)
        #expect(fixture.server.hls.rewrites.count == 1)
        #expect(fixture.server.permissions.isAllowed(segment))
    }

    @Test("A segment a player keeps fetching stays allowed while other playlists mint URLs (a VOD is served once)")
    func aURLInUseStaysMinted() async throws {
        let playlist = Data(Self.media(segments: 3).utf8)
        let segment = Data(repeating: 7, count: 1000)
        let origin = try ScriptedOrigin { request, reply in
            reply.respond(body: request.path.hasSuffix(".m3u8") ? playlist : segment)
        }
        defer { origin.stop() }
        let fixture = try Fixture(configuration: MediaServerConfiguration(mintedURLBytes: 4096))
        let port = try #require(fixture.server.port)
        #expect(
            try await Self.get(fixture.path(HLSRoute(origin: origin.url("/p.m3u8"), kind: .mediaPlaylist)), port: port)
                .status == 200)
        // The local URL the player read in the playlist (not minted again by the test).
        let local = HLSRoute(origin: origin.url("/segment0.ts"), kind: .segment).path(secret: fixture.server.secret)
        for round in 0..<10 {
            // Other players' playlists mint less than half the budget between two fetches of this segment.
            for index in 0..<40 {
                _ = fixture.server.localURL(
                    for: HLSRoute(origin: URL(string: "https://cdn.example.com/r\(round)s\(index).ts")!, kind: .segment)
                )
            }
            let answer = try await Self.get(local, port: port)
            #expect(answer.status == 200, "round \(round): \(answer.head)")
            if answer.status != 200 { break }
        }
    }

    @Test("hls-get of a playlist over the segment limit exits non-zero with one line naming the limit")
    func hlsGetRefusesAnOversizedPlaylist() async throws {
        let over = Data(Self.media(segments: 20_001).utf8)
        let origin = try ScriptedOrigin { _, reply in reply.respond(body: over) }
        defer { origin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hls-get-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let executable = try #require(CacheToolServeTests.cachetool)
        let arguments = ["hls-get", "--store", directory.path, origin.url("/over.m3u8").absoluteString]
        let outputFile = directory.path + ".out"
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let process = try ChildProcess(
            executable.path, arguments, standardOutput: outputFile, standardError: outputFile)
        await process.exit()
        let (status, output) = (process.terminationStatus ?? -1, ChildOutput.text(outputFile))
        let lines = output.split(separator: "\n")
        #expect(status != 0)
        #expect(lines.count == 1 && lines[0].contains("too large: more than 20000 segments"), "\(output)")
    }

    final class Mismatches: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var none: Bool { lock.withLock { count == 0 } }
    }
}
