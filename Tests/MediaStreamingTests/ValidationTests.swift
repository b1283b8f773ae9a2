import Foundation
import MediaStore
import MediaStreaming
import Testing

/// Behaviour 5: validators stored, expired entries revalidated, 304
/// renews, a changed resource replaces the old content.
@Suite("Revalidation", .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"))
struct ValidationTests {
    let server = NginxServer.shared

    private func publishTrack(_ data: Data, name: String, age: TimeInterval) throws -> URL {
        try server.publish(data, at: name, modified: Date(timeIntervalSinceNow: -age))
        return server.url(name)
    }

    @Test("5. ETag and Last-Modified are stored; an expired entry is revalidated and 304 renews it without a body")
    func notModifiedRenews() async throws {
        let test = try TestCache()
        let original = try Fixtures.data("track.mp3")
        let url = try publishTrack(original, name: "v-\(UUID().uuidString).mp3", age: 3600)
        _ = try await test.player(url).play()
        let info = try #require(try test.store.info(forKey: url.absoluteString))
        #expect(info.metadata.etag?.hasPrefix("\"") == true)
        #expect(info.metadata.lastModified?.hasSuffix("GMT") == true)
        #expect(try await test.waitUntilComplete(url))

        try test.store.setExpiry(.at(Date(timeIntervalSinceNow: -1)), forKey: url.absoluteString)
        test.freshCache()
        test.origin.reset()
        let (_, body, _) = try await test.player(url).play()
        #expect(body == original)
        let requests = test.origin.requests
        #expect(requests.count == 1)
        #expect(requests.first?.request.ifNoneMatch == info.metadata.etag)
        #expect(requests.first?.request.ifModifiedSince == info.metadata.lastModified)
        #expect(requests.first?.status == 304)
        #expect(test.origin.bodyBytes == 0)
        let renewed = try #require(try test.store.info(forKey: url.absoluteString))
        #expect(!renewed.isExpired())
        #expect(test.cache.statistics.notModified == 1)
    }

    @Test("5. A changed resource (new ETag, other length) replaces the old content, never mixed")
    func changedResourceReplaces() async throws {
        let test = try TestCache()
        let name = "v-\(UUID().uuidString).mp3"
        let old = try Fixtures.data("track.mp3")
        let url = try publishTrack(old, name: name, age: 7200)
        _ = try await test.player(url).play()
        #expect(try await test.waitUntilComplete(url))
        let oldTag = try test.store.info(forKey: url.absoluteString)?.metadata.etag

        let new = try Fixtures.data("track.flac")
        _ = try publishTrack(new, name: name, age: 60)
        try test.store.setExpiry(.at(Date(timeIntervalSinceNow: -1)), forKey: url.absoluteString)
        test.freshCache()
        let (info, body, _) = try await test.player(url).play()
        #expect(info.contentLength == new.count)
        #expect(body == new)
        #expect(try await test.waitUntilComplete(url))
        #expect(try test.storedBytes(of: url) == new)
        #expect(try test.store.info(forKey: url.absoluteString)?.metadata.etag != oldTag)
    }

    @Test("5. A resource changing in the middle of a read fails the reader and drops the entry")
    func changeWhileReading() async throws {
        let test = try TestCache(
            origin: FakeOrigin(HTTPOrigin(timeout: .seconds(10)), fault: .changedETag, times: .max))
        // The first request (content information) passes untouched...
        let url = server.url("track.wav")
        let original = try Fixtures.data("track.wav")
        let player = test.player(url)
        let opening = await player.load(contentInformation: true, offset: 0, length: 2)
        // ...then every response announces another ETag than the first one did.
        #expect(opening.error == nil)
        #expect(opening.data == original.prefix(2))
        let rest = await player.load(offset: 300_000, length: 10_000)
        #expect(rest.error == .resourceChanged(url: url))
        #expect(try test.store.info(forKey: url.absoluteString) == nil)
        #expect(try test.cachedBytesMatch(url, original))
    }

    @Test("5. Cache-Control max-age sets the expiry when configured")
    func maxAgeSetsExpiry() async throws {
        let test = try TestCache(configuration: StreamingConfiguration(chunksPerRequest: 2, honorsCacheControl: true))
        let url = server.url("maxage/track.ogg")
        let before = Date()
        _ = try await test.player(url).play()
        // The entry is prepared beside the first bytes: it may land after the play's end.
        await eventually("stored") { (try? test.store.info(forKey: url.absoluteString))??.isComplete == true }
        let after = Date()
        let expiry = try #require(try test.store.info(forKey: url.absoluteString)?.expiry)
        // max-age=60 from when the response came: between the play's start and now.
        #expect(expiry >= before.addingTimeInterval(59) && expiry <= after.addingTimeInterval(61))
    }
}
