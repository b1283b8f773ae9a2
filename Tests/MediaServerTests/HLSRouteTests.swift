import Foundation
import HLSPlaylist
import MediaStore
import MediaStreaming
import Testing

@testable import MediaServer

@Suite struct HLSRouteTests {
    let secret = "s3cr3t0123456789"

    @Test func everyKindMediaTypeAndRangeRoutesBack() throws {
        let origin = try #require(URL(string: "https://cdn.example.com/v/seg%201.ts?token=a&b=%2F"))
        let kinds: [HLSResourceKind] = [
            .masterPlaylist, .mediaPlaylist, .iFramePlaylist, .key, .initializationSegment, .segment, .other,
        ]
        let types: [Rendition.MediaType?] = [nil, .audio, .video, .subtitles, .closedCaptions]
        for kind in kinds {
            for type in types {
                for range in [nil, ByteRange(offset: 0, length: 1), ByteRange(offset: 1355, length: 16093)] {
                    let route = HLSRoute(origin: origin, kind: kind, mediaType: type, byteRange: range)
                    let path = route.path(secret: secret)
                    #expect(path.hasPrefix("/\(secret)/h/") && path.hasSuffix("/seg%201.ts"))
                    #expect(ServerRoute.resolve(path, secret: secret) == .hls(route), "\(path)")
                }
            }
        }
    }

    @Test func originEncodingIsFoundationsBase64URLWithoutPadding() throws {
        for length in 0..<40 {
            let text =
                "https://a.example/" + String(repeating: "x?é~", count: length / 4)
                + String(repeating: "y", count: length % 4)
            let url = try #require(URL(string: text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!))
            let expected = Data(url.absoluteString.utf8).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(ServerRoute.encodeOrigin(url) == expected, "\(text)")
            #expect(ServerRoute.decodeOrigin(expected) == url)
        }
    }

    @Test func malformedTagsAreNotFoundAndTheSecretStillGuards() throws {
        let origin = try #require(URL(string: "https://cdn.example.com/a.ts"))
        let good = HLSRoute(origin: origin, kind: .segment).path(secret: secret)
        let encoded = ServerRoute.encodeOrigin(origin)
        for tag in ["", "x", "sz", "saa", "s.1", "s.1.0", "s.-1.2", "s.1.2.3", "s.a.2", "s.99999999999999999999.1"] {
            #expect(ServerRoute.resolve("/\(secret)/h/\(encoded)/\(tag)/a.ts", secret: secret) == .notFound, "\(tag)")
        }
        #expect(ServerRoute.resolve(good.replacingOccurrences(of: secret, with: "guess"), secret: secret) == .forbidden)
    }

    @Test func m3u8URLsAreMintedAsHLS() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("hlsroute-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = MediaServer(cache: StreamingCache(store: try MediaStore(directory: directory)))
        let url = server.url(for: URL(string: "https://cdn.example.com/a/master.m3u8")!)
        #expect(url.path.contains("/h/") && url.lastPathComponent == "master.m3u8")
        #expect(!server.url(for: URL(string: "https://cdn.example.com/a/track.mp3")!).path.contains("/h/"))
    }
}
