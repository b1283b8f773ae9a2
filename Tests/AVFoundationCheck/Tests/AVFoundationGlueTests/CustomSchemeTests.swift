import Foundation
import Testing

@testable import MediaStreamingAVFoundationGlue

/// The custom scheme that routes the asset's bytes through the glue.
@Suite("AVFoundation glue: the custom scheme")
struct CustomSchemeTests {
    static let urls = [
        "https://cdn.example.com/audio/track.mp3",
        "http://127.0.0.1:8080/track.mp3?token=abc%2Fdef&expires=1700000000&sig=a+b",
        "https://user:p%40ss%3Aword@media.example.com:8443/a%20b/tr%C3%A4ck.m4a?q=%E2%9C%93&empty=&x=1#t=10",
        "http://[::1]:9000/path;params/file.flac?a=1&a=2",
        "https://example.com/%25already%2520escaped.ogg",
        "HTTPS://Example.COM/Upper.MP3",
    ]

    @Test("Round trip: the custom URL keeps every part and maps back to the very same URL", arguments: urls)
    func roundTrip(_ text: String) throws {
        let url = try #require(URL(string: text))
        let custom = ResourceLoaderBridge.customURL(for: url)
        let scheme = try #require(custom.scheme)
        #expect(scheme == "mediacache-" + (url.scheme ?? ""))
        // RFC 3986 scheme characters only: no underscore (iOS 17's URL(string:) rejects one).
        #expect(!scheme.contains("_"))
        #expect(scheme.first?.isLetter == true)
        #expect(scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
        // The custom URL survives a trip through its string (as AVFoundation hands it back).
        let reparsed = try #require(URL(string: custom.absoluteString))
        #expect(reparsed.absoluteString == custom.absoluteString)
        let original = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false))
        let mapped = try #require(URLComponents(url: reparsed, resolvingAgainstBaseURL: false))
        #expect(mapped.percentEncodedUser == original.percentEncodedUser)
        #expect(mapped.percentEncodedPassword == original.percentEncodedPassword)
        #expect(mapped.percentEncodedHost == original.percentEncodedHost)
        #expect(mapped.port == original.port)
        #expect(mapped.percentEncodedPath == original.percentEncodedPath)
        #expect(mapped.percentEncodedQuery == original.percentEncodedQuery)
        #expect(mapped.percentEncodedFragment == original.percentEncodedFragment)
        let back = try #require(ResourceLoaderBridge.originalURL(for: reparsed))
        #expect(back.absoluteString == url.absoluteString)
    }

    @Test("Only the custom scheme maps back")
    func foreignSchemes() throws {
        #expect(ResourceLoaderBridge.originalURL(for: URL(string: "https://example.com/a.mp3")!) == nil)
        #expect(ResourceLoaderBridge.originalURL(for: URL(string: "skd://key")!) == nil)
        #expect(ResourceLoaderBridge.originalURL(for: try #require(URL(string: "mediacache-://x"))) == nil)
        #expect(ResourceLoaderBridge.schemePrefix.allSatisfy { $0.isLetter || $0 == "-" })
    }
}
