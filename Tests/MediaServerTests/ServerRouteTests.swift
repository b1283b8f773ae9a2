import Foundation
import Testing

@testable import MediaServer

@Suite struct ServerRouteTests {
    let secret = "s3cr3t0123456789"

    @Test func mintedPathsRouteBack() throws {
        for text in [
            "https://cdn.example.com/music/a%20b.mp3?token=1&x=%2F", "http://127.0.0.1:8080/track.flac",
            "https://example.com/", "https://example.com",
        ] {
            let origin = try #require(URL(string: text))
            let path = ServerRoute.path(for: origin, secret: secret)
            #expect(path.hasPrefix("/\(secret)/o/"))
            #expect(ServerRoute.resolve(path, secret: secret) == .media(origin), "\(text)")
            #expect(ServerRoute.resolve(path + "?cachebust=1", secret: secret) == .media(origin))
        }
        let path = ServerRoute.path(for: URL(string: "https://cdn.example.com/music/track.m4a")!, secret: secret)
        #expect(path.hasSuffix("/track.m4a"), "players see the real extension")
    }

    @Test func withoutTheSecretIsForbidden() {
        let path = ServerRoute.path(for: URL(string: "https://a.example/x.mp3")!, secret: secret)
        #expect(ServerRoute.resolve(path.replacingOccurrences(of: secret, with: "guess"), secret: secret) == .forbidden)
        #expect(ServerRoute.resolve("/", secret: secret) == .forbidden)
        #expect(ServerRoute.resolve("/\(secret)x/o/a/b", secret: secret) == .forbidden)
        #expect(ServerRoute.resolve("/ping", secret: secret) == .ping)
        #expect(ServerRoute.resolve("http://a/ping", secret: secret) == .badTarget)
        #expect(ServerRoute.resolve("/\(secret)/x", secret: secret) == .notFound)
    }

    @Test func onlyHTTPOriginsWithoutControlCharacters() {
        func encoded(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        for text in [
            "file:///etc/passwd", "http://a/x\r\nHost: evil", "http://a/x y", "gopher://a/", "http:///nohost",
            "not a url",
        ] {
            #expect(ServerRoute.resolve("/\(secret)/o/\(encoded(text))/x", secret: secret) == .notFound, "\(text)")
        }
    }

    /// The decoder of local URLs against Foundation's base64 decoding:
    /// the same URL for every canonical encoding (what ``ServerRoute/encodeOrigin(_:)``
    /// writes), `nil` for every other text, mutated encodings included.
    @Test func originDecodingAgreesWithFoundation() throws {
        func reference(_ text: String) -> URL? {
            guard !text.isEmpty, text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") })
            else { return nil }
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.utf8.count % 4 != 0 { base64 += "=" }
            guard let data = Data(base64Encoded: base64) else { return nil }
            let string = String(decoding: data, as: UTF8.self)
            guard string.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), let url = URL(string: string),
                let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
                let host = url.host, !host.isEmpty, url.absoluteString == string,
                ServerRoute.encodeOrigin(url) == text
            else { return nil }
            return url
        }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.~%é")
        var random = SystemRandomNumberGenerator()
        var checked = 0
        for length in 1..<48 {
            let text = "https://cdn.example.com/" + String(repeating: "a", count: length) + "?q=\(length)"
            let encoded = ServerRoute.encodeOrigin(try #require(URL(string: text)))
            #expect(ServerRoute.decodeOrigin(encoded)?.absoluteString == text)
            for _ in 0..<40 {
                var characters = Array(encoded)
                let index = Int.random(in: 0..<characters.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: characters[index] = alphabet.randomElement(using: &random)!
                case 1: characters.remove(at: index)
                default: characters.insert(alphabet.randomElement(using: &random)!, at: index)
                }
                let mutated = String(characters)
                #expect(ServerRoute.decodeOrigin(mutated) == reference(mutated), "\(mutated)")
                checked += 1
            }
        }
        for text in ["", "A", "aHR0cA=", "aHR0cDovL2EvYg==", "aHR0cDovL2EvYh", "aHR0cDovL2EvYg+", "aHR0cDovL2Ev/g"] {
            #expect(ServerRoute.decodeOrigin(text) == reference(text), "\(text)")
        }
        #expect(checked > 1000)
    }

    @Test func allowlist() throws {
        let list = OriginAllowlist([
            "cdn.example.com", "*.media.example.org", "https://files.example.net/music/", "https://x.example/a",
        ])
        func allows(_ text: String) -> Bool { list.allows(URL(string: text)!) }
        #expect(allows("https://cdn.example.com/a.mp3") && allows("http://CDN.example.com/b"))
        #expect(!allows("http://cdn.example.com:8080/b"))
        #expect(!allows("https://cdn.example.com.evil.com/a") && !allows("https://evil.com/cdn.example.com"))
        #expect(allows("https://a.media.example.org/x") && !allows("https://media.example.org/x"))
        #expect(!allows("https://evilmedia.example.org/x"))
        #expect(allows("https://files.example.net/music/a/b.flac"))
        #expect(!allows("https://files.example.net/musicals/a") && !allows("http://files.example.net/music/a"))
        #expect(!allows("https://files.example.net:444/music/a"))
        #expect(!allows("https://files.example.net/music/../private/a"))
        #expect(allows("https://x.example/a") && allows("https://x.example/a/b") && !allows("https://x.example/ab"))
        #expect(!allows("https://user:pw@cdn.example.com/a"))
        #expect(!allows("ftp://cdn.example.com/a"))
        #expect(!OriginAllowlist().allows(URL(string: "https://cdn.example.com/a")!))
    }

    /// The route cache gives what `resolve` gives, keeps media and HLS
    /// routes only, stays within its capacity, and never answers for another secret.
    @Test func routeCache() throws {
        let cache = RouteCache(capacity: 4)
        let origins = (0..<10).map { URL(string: "https://cdn.example.com/track\($0).mp3")! }
        let targets =
            origins.map { ServerRoute.path(for: $0, secret: secret) + "?n=1" }
            + [
                "/ping", "/wrong/o/x/y", "/\(secret)/x", "relative",
                HLSRoute(origin: URL(string: "https://cdn.example.com/a/master.m3u8")!, kind: .masterPlaylist)
                    .path(secret: secret),
            ]
        for _ in 0..<2 {
            for target in targets {
                #expect(cache.route(of: target, secret: secret) == ServerRoute.resolve(target, secret: secret))
                #expect(cache.count <= 4)
            }
        }
        let kept = ServerRoute.path(for: origins[0], secret: secret)
        #expect(cache.route(of: kept, secret: secret) == .media(origins[0]))
        #expect(cache.route(of: kept, secret: "another") == .forbidden)
        #expect(cache.route(of: "/ping", secret: secret) == .ping)
        let before = cache.count
        _ = cache.route(of: "/\(secret)/nothing", secret: secret)
        #expect(cache.count == before, "a route that is not media or HLS was kept")
    }
}
