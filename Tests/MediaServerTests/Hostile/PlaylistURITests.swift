import Foundation
import MediaServer
import MediaStreaming
import TestSupport
import Testing

/// A playlist's URIs are minted only when they are on the playlist's own
/// origin or the allowlist allows them: a URI to another port, another
/// loopback address or an odd numeric host gets a local URL that answers
/// 403 (no request leaves the server for it), an event says which, and the
/// rest of the playlist plays. (Link-local and private addresses are refused
/// by the same rule; `HostClassTests` checks their classes without a
/// network, so that no test could ever send a request off loopback.)
@Suite("Playlist URIs", .serialized, .timeLimit(.minutes(1)))
struct PlaylistURITests {
    static let segment = Data((0..<9_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    /// The URI lines of a served playlist and the `URI="…"` attributes.
    private func uris(_ playlist: Data) -> [String] {
        String(decoding: playlist, as: UTF8.self).split(separator: "\n").compactMap { line -> String? in
            if !line.hasPrefix("#") { return String(line) }
            guard let start = line.range(of: "URI=\"") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// The refused URIs the server announced, read from its buffered events (at most `timeout` seconds).
    private func refusedURIs(_ events: AsyncStream<MediaServerEvent>, count: Int) async -> [URL] {
        await withTaskGroup(of: [URL].self) { group in
            group.addTask {
                var found: [URL] = []
                for await event in events {
                    if case .playlistURIRefused(_, let uri, _) = event { found.append(uri) }
                    if found.count >= count { break }
                }
                return found
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(5))
                return []
            }
            let first = await group.next() ?? []
            group.cancelAll()
            return first
        }
    }

    @Test func urisOnOtherOriginsAreRefusedBeforeAnyRequest() async throws {
        let forbidden = try ScriptedOrigin { request, reply in reply.serve(Self.segment, for: request) }
        defer { forbidden.stop() }
        let evil = forbidden.url("/evil").absoluteString
        let origin = try ScriptedOrigin { request, reply in
            switch request.path {
            case "/master.m3u8":
                let text = """
                    #EXTM3U
                    #EXT-X-STREAM-INF:BANDWIDTH=100000
                    low/index.m3u8
                    #EXT-X-STREAM-INF:BANDWIDTH=200000
                    \(evil)/index.m3u8
                    #EXT-X-STREAM-INF:BANDWIDTH=300000
                    http://127.0.0.2:9/latest/meta-data/index.m3u8

                    """
                reply.respond(headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(text.utf8))
            case "/low/index.m3u8":
                let text = """
                    #EXTM3U
                    #EXT-X-TARGETDURATION:4
                    #EXT-X-KEY:METHOD=AES-128,URI="http://[::ffff:127.0.0.2]:9/key"
                    #EXTINF:4,
                    seg0.ts
                    #EXTINF:4,
                    \(evil)/seg1.ts
                    #EXTINF:4,
                    http://2130706433:\(forbidden.port)/seg2.ts
                    #EXT-X-ENDLIST

                    """
                reply.respond(headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(text.utf8))
            default:
                reply.serve(Self.segment, for: request)
            }
        }
        defer { origin.stop() }
        let fixture = try AllowlistedServer(allowlist: OriginAllowlist())
        let events = fixture.server.events()
        let master = try await Curl.run([fixture.server.url(for: origin.url("/master.m3u8")).absoluteString])
        #expect(master.status == 200)
        let variants = uris(master.body)
        try #require(variants.count == 3)
        #expect(variants.allSatisfy { $0.hasPrefix(fixture.base) })
        #expect(try await Curl.run([variants[1]]).status == 403)
        let metadata = try await Curl.run([variants[2]])
        #expect(metadata.status == 403)
        #expect(String(decoding: metadata.body, as: UTF8.self).contains("loopback"))

        let media = try await Curl.run([variants[0]])
        #expect(media.status == 200)
        let references = uris(media.body)
        try #require(references.count == 4)
        #expect(references.allSatisfy { $0.hasPrefix(fixture.base) })
        let key = try await Curl.run([references[0]])
        #expect(key.status == 403)
        let kept = try await Curl.run([references[1]])
        #expect(kept.status == 200 && kept.body == Self.segment)
        #expect(try await Curl.run([references[2]]).status == 403)
        let odd = try await Curl.run([references[3]])
        #expect(odd.status == 403)
        #expect(String(decoding: odd.body, as: UTF8.self).contains("non-canonical"))

        #expect(forbidden.requests.isEmpty)
        #expect(Set(origin.requests.map(\.path)) == ["/master.m3u8", "/low/index.m3u8", "/low/seg0.ts"])
        let refused = await refusedURIs(events, count: 5)
        #expect(
            Set(refused.map(\.absoluteString)) == [
                "\(evil)/index.m3u8", "http://127.0.0.2:9/latest/meta-data/index.m3u8",
                "http://[::ffff:127.0.0.2]:9/key", "\(evil)/seg1.ts",
                "http://2130706433:\(forbidden.port)/seg2.ts",
            ])
    }

    @Test func anAllowlistPatternNamingTheHostAndPortLetsItThrough() async throws {
        let cdn = try ScriptedOrigin { request, reply in reply.serve(Self.segment, for: request) }
        defer { cdn.stop() }
        let segmentURL = cdn.url("/seg0.ts").absoluteString
        let origin = try ScriptedOrigin { _, reply in
            let text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n\(segmentURL)\n#EXT-X-ENDLIST\n"
            reply.respond(headers: ["Content-Type": "application/vnd.apple.mpegurl"], body: Data(text.utf8))
        }
        defer { origin.stop() }
        let fixture = try AllowlistedServer(allowlist: OriginAllowlist(["127.0.0.1:\(cdn.port)"]))
        let media = try await Curl.run([fixture.server.url(for: origin.url("/index.m3u8")).absoluteString])
        let references = uris(media.body)
        try #require(references.count == 1)
        let segment = try await Curl.run([references[0]])
        #expect(segment.status == 200 && segment.body == Self.segment)
        #expect(cdn.requests.count == 1)
    }
}
