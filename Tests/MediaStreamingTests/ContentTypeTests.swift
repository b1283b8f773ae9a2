import Foundation
import MediaStore
import MediaStreaming
import Testing

/// Behaviours 7 and 8: content types (declared or sniffed) and cache keys.
@Suite(
    "Content types and cache keys",
    .enabled(if: ExternalTool.available("nginx", "ffprobe"), "needs nginx and ffprobe (Tools/bootstrap installs them)"))
struct ContentTypeTests {
    let server = NginxServer.shared

    static let expected: [(String, String, String)] = [
        ("track.mp3", "audio/mpeg", "public.mp3"), ("track.m4a", "audio/mp4", "com.apple.m4a-audio"),
        ("track.aac", "audio/aac", "public.aac-audio"), ("track.flac", "audio/flac", "org.xiph.flac"),
        ("track.ogg", "audio/ogg", "org.xiph.ogg-audio"), ("track.opus", "audio/ogg", "org.xiph.ogg-audio"),
        ("track.wav", "audio/wav", "com.microsoft.waveform-audio"),
    ]

    @Test(
        "7. Extensionless URLs served as application/octet-stream are sniffed; the stored bytes decode",
        arguments: 0..<7)
    func sniffed(index: Int) async throws {
        let (name, mime, uti) = Self.expected[index]
        let test = try TestCache()
        let url = server.url("noext-" + name.replacingOccurrences(of: ".", with: "-"))
        let (info, body, _) = try await test.player(url).play()
        #expect(info.mimeType == mime)
        #expect(info.uniformTypeIdentifier == uti)
        #expect(body == (try Fixtures.data(name)))
        #expect(try await test.waitUntilComplete(url))
        #expect(try test.store.info(forKey: url.absoluteString)?.metadata.mimeType == mime)
        #expect(try probeDuration(of: try test.storedBytes(of: url), name: name) > 3.5)
    }

    @Test("7. A declared, specific Content-Type is used as it is")
    func declared() async throws {
        let test = try TestCache()
        let outcome = await test.player(server.url("track.flac")).load(contentInformation: true, offset: 0, length: 2)
        #expect(outcome.information?.mimeType == "audio/flac")
    }

    @Test("8. The default key is the URL; the token policy makes signed URLs share one entry")
    func cacheKeys() async throws {
        let policy = CacheKeyPolicy.droppingQueryItems(["token", "sig"])
        #expect(
            policy.key(for: URL(string: "https://a.example/x.mp3?token=1&q=2&sig=3")!) == "https://a.example/x.mp3?q=2")
        #expect(policy.key(for: URL(string: "https://a.example/x.mp3?token=1")!) == "https://a.example/x.mp3")
        #expect(
            CacheKeyPolicy.url.key(for: URL(string: "https://a.example/x.mp3?token=1")!)
                == "https://a.example/x.mp3?token=1")

        let test = try TestCache(configuration: StreamingConfiguration(cacheKeyPolicy: policy, chunksPerRequest: 2))
        let first = server.url("track.aac?token=1")
        let second = server.url("track.aac?token=2")
        #expect(test.cache.cacheKey(for: first) == test.cache.cacheKey(for: second))
        _ = try await test.player(first).play()
        #expect(try await test.waitUntilComplete(first))
        test.origin.reset()
        let (_, body, _) = try await test.player(second).play()
        #expect(body == (try Fixtures.data("track.aac")))
        #expect(test.origin.requests.isEmpty)

        let plain = try TestCache()
        _ = try await plain.player(first).play()
        plain.origin.reset()
        _ = try await plain.player(second).play()
        #expect(!plain.origin.requests.isEmpty)
    }

    @Test("Caller headers (auth) are forwarded on every origin request")
    func headersForwarded() async throws {
        let test = try TestCache()
        let loader = test.cache.loader(for: server.url("track.mp3"), headers: ["Authorization": "Bearer secret"])
        _ = try await PlayerSimulator(loader: loader).play()
        #expect(!test.origin.requests.isEmpty)
        #expect(test.origin.requests.allSatisfy { $0.request.headers["Authorization"] == "Bearer secret" })
    }
}
