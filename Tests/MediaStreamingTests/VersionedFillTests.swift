import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaDownloads
@testable import MediaStreaming

/// Issue 8 §1 through the fetcher: a resource that changes (length and
/// content) while it is being downloaded never leaves a mixed entry in the
/// store, and every reader gets consistent bytes of one version or a
/// clean error.
@Suite struct VersionedFillTests {
    static let url = URL(string: "https://origin.test/track.mp3")!
    static let old = FakeOrigin.content(count: 300_000, seed: 1)
    static let new = FakeOrigin.content(count: 410_000, seed: 2)

    /// One session downloads the old file; meanwhile the origin changes and
    /// a second session (another cache over the same store, as another
    /// process would be) starts storing the new one. The first session's
    /// remaining old bytes, which fall into holes of the new entry, are
    /// refused by the store (`entryReplaced`), still reach its player, and
    /// never land in the new entry.
    @Test(arguments: [true, false])
    func aChangeMidDownloadNeverMixesVersions(withETags: Bool) async throws {
        let chunk = TestCache.chunkSize
        let origin = FakeOrigin(
            versions: [
                .init(bytes: Self.old, etag: withETags ? "\"old\"" : nil, contentType: "audio/mpeg"),
                .init(bytes: Self.new, etag: withETags ? "\"new\"" : nil, contentType: "audio/mpeg"),
            ], holdAfter: [0: 4 * chunk, 1: 2 * chunk])
        // One request covers the whole file, so each session's response
        // carries its version's bytes to the end.
        let configuration = StreamingConfiguration(chunksPerRequest: 64, stallTimeout: .seconds(30))
        let test = try TestCache(configuration: configuration, origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let loaderA = test.cache.loader(for: Self.url)
        let playerA = PlayerSimulator(loader: loaderA)
        let first = playerA.start(contentInformation: true, offset: 0, length: nil)
        await first.waitFor(bytes: 4 * chunk)
        let oldVersion = try #require(try test.store.info(forKey: key)).version

        // The second session asks the origin rather than trusting the fresh
        // entry, finds it changed and starts the new version: two chunks.
        origin.change(to: 1)
        var revalidating = configuration
        revalidating.alwaysRevalidate = true
        let cacheB = StreamingCache(store: test.store, origin: test.origin, configuration: revalidating)
        let second = Task { try await PlayerSimulator(loader: cacheB.loader(for: Self.url)).play() }
        for _ in 0..<1_000 {
            if let info = try test.store.info(forKey: key), info.version != oldVersion, info.cachedBytes >= 2 * chunk {
                break
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        let newVersion = try #require(try test.store.info(forKey: key)).version
        #expect(newVersion != oldVersion)
        #expect(try test.store.cachedRanges(forKey: key) == [0..<2 * chunk])

        // The first session's old response goes on to the end.
        origin.release(0)
        let outcomeA = await first.outcome()
        #expect(outcomeA.information?.contentLength == Self.old.count)
        if outcomeA.error == nil {
            #expect(outcomeA.data == Self.old)
        } else {
            #expect(outcomeA.data == Self.old.prefix(outcomeA.data.count))
        }
        // Its old bytes were refused by the store, not written into the new entry.
        #expect(loaderA.statistics.replacedWrites > 0)
        #expect(try test.store.cachedRanges(forKey: key) == [0..<2 * chunk])

        origin.release(1)
        let (infoB, bodyB, _) = try await second.value
        #expect(infoB.contentLength == Self.new.count)
        #expect(bodyB == Self.new)
        #expect(try await test.waitUntilComplete(Self.url))
        let info = try #require(try test.store.info(forKey: key))
        #expect(info.version == newVersion)
        #expect(info.contentDigest == ContentDigest(of: Self.new))
        #expect(try test.storedBytes(of: Self.url) == Self.new)
        #expect(try test.store.verify().isClean)

        // Asked for more, the first session finds the origin changed: a
        // clean error, and the new entry (not its version) stays.
        let later = await playerA.load(offset: 200_000, length: 50_000)
        if let error = later.error {
            #expect(error == .resourceChanged(url: Self.url))
        } else {
            #expect(later.data == Self.old[200_000..<250_000])
        }
        #expect(try test.store.info(forKey: key)?.version == newVersion)
        #expect(try test.storedBytes(of: Self.url) == Self.new)
    }

    /// One session, requests of two chunks: the origin changes length
    /// between two requests. The reader fails cleanly, the entry of the
    /// old version is dropped, and the next play stores the new one whole.
    @Test func aLengthChangeBetweenRequestsFailsCleanly() async throws {
        let origin = FakeOrigin(versions: [
            .init(bytes: Self.old, etag: nil, contentType: "audio/mpeg"),
            .init(bytes: Self.new, etag: nil, contentType: "audio/mpeg"),
        ])
        let configuration = StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(30))
        let test = try TestCache(configuration: configuration, origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let player = test.player(Self.url)
        let opening = await player.load(contentInformation: true, offset: 0, length: 2)
        #expect(opening.information?.contentLength == Self.old.count)
        let start = await player.load(offset: 0, length: 4 * TestCache.chunkSize)
        #expect(start.data == Self.old.prefix(4 * TestCache.chunkSize))
        origin.change(to: 1)
        let rest = await player.load(offset: 4 * TestCache.chunkSize, length: nil)
        #expect(rest.error == .resourceChanged(url: Self.url))
        #expect(rest.data == Self.old[(4 * TestCache.chunkSize)..<(4 * TestCache.chunkSize + rest.data.count)])
        // Whatever the store holds now is the new version's bytes only.
        if let info = try test.store.info(forKey: key) {
            #expect(info.length == Self.new.count)
            #expect(try test.cachedBytesMatch(Self.url, Self.new))
        }

        let (info, body, _) = try await test.player(Self.url).play()
        #expect(info.contentLength == Self.new.count)
        #expect(body == Self.new)
        #expect(try await test.waitUntilComplete(Self.url))
        #expect(try test.storedBytes(of: Self.url) == Self.new)
        #expect(try test.store.verify().isClean)
    }

    /// An offline download pins the version it downloaded, never a
    /// replacement: when another session replaces the entry midway, the
    /// download fails and the new entry stays unpinned.
    @Test func anOfflineDownloadPinsOnlyTheVersionItDownloaded() async throws {
        let chunk = TestCache.chunkSize
        // Every response of the old version holds after 4 chunks of its body.
        let origin = FakeOrigin(
            versions: [
                .init(bytes: Self.old, etag: "\"old\"", contentType: "audio/mpeg"),
                .init(bytes: Self.new, etag: "\"new\"", contentType: "audio/mpeg"),
            ],
            holdAfter: [0: 4 * chunk])
        let configuration = StreamingConfiguration(chunksPerRequest: 64, stallTimeout: .seconds(30))
        let test = try TestCache(configuration: configuration, origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let connections = 4
        let download = OfflineDownloader(cache: test.cache, connectionsPerDownload: connections).download(Self.url)
        // The premise: every request of the download (the probe, joined by the
        // first segment, and the other segments) was answered by the old
        // version before the origin changes, and the old entry holds bytes.
        // (A segment asked after the change sees the change instead:
        // `anOfflineDownloadFailsWhenASegmentSeesTheChange`.)
        await eventually("the download's \(connections) requests answered") {
            origin.requests.count >= connections
        }
        await eventually("4 chunks stored") {
            (try? test.store.info(forKey: key)?.cachedBytes ?? 0) ?? 0 >= 4 * chunk
        }
        let answered = origin.requests
        try #require(answered.count == connections, "premise: \(answered.map(\.request.rangeHeader))")
        let oldVersion = try #require(try test.store.info(forKey: key)).version

        origin.change(to: 1)
        var revalidating = configuration
        revalidating.alwaysRevalidate = true
        let cacheB = StreamingCache(store: test.store, origin: test.origin, configuration: revalidating)
        let newVersion = try await cacheB.loader(for: Self.url).downloadAll()
        #expect(newVersion != oldVersion)
        #expect(try test.store.info(forKey: key)?.version == newVersion)

        origin.release(0)
        await #expect(throws: DownloadError.self) { try await download.completion() }
        guard case .failed(.unsupported) = download.state else {
            Issue.record("expected the download to fail as not cacheable, got \(download.state)")
            return
        }
        let info = try #require(try test.store.info(forKey: key))
        #expect(info.version == newVersion)
        #expect(!info.isPinned)
        #expect(info.isComplete)
        #expect(try test.storedBytes(of: Self.url) == Self.new)

        // Downloaded again, undisturbed: the version it reports is the one pinned.
        let again = OfflineDownloader(cache: cacheB).download(Self.url)
        try await again.completion()
        let pinned = try #require(try test.store.info(forKey: key))
        #expect(pinned.isPinned)
        #expect(pinned.version == newVersion)
    }

    /// Routes range requests that start past the first byte (a download's
    /// segments) to `inner` only once opened: they reach the origin after
    /// whatever the test did meanwhile.
    final class SegmentGate: Origin, @unchecked Sendable {
        let inner: FakeOrigin
        private let isOpen = Locked(false)

        init(_ inner: FakeOrigin) { self.inner = inner }

        func open() { isOpen.withLock { $0 = true } }

        func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
            while (request.range?.lowerBound ?? 0) > 0, !isOpen.current, !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
            }
            return try await inner.fetch(request)
        }
    }

    /// A download over several connections whose segments are asked after
    /// the origin changed: they are answered by the new version, which the
    /// download refuses; it fails promptly as the resource changed, pins
    /// nothing, and stores none of the new bytes into the old entry.
    @Test func anOfflineDownloadFailsWhenASegmentSeesTheChange() async throws {
        let chunk = TestCache.chunkSize
        let origin = FakeOrigin(
            versions: [
                .init(bytes: Self.old, etag: "\"old\"", contentType: "audio/mpeg"),
                .init(bytes: Self.new, etag: "\"new\"", contentType: "audio/mpeg"),
            ],
            holdAfter: [0: 4 * chunk])
        let gate = SegmentGate(origin)
        let test = try TestCache(
            configuration: StreamingConfiguration(chunksPerRequest: 64, stallTimeout: .seconds(30)), origin: gate)
        let key = test.cache.cacheKey(for: Self.url)
        let download = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4).download(Self.url)
        await eventually("4 chunks stored") {
            (try? test.store.info(forKey: key)?.cachedBytes ?? 0) ?? 0 >= 4 * chunk
        }
        // Only the probe was answered, by the old version.
        try #require(origin.requests.count == 1)
        origin.change(to: 1)
        gate.open()
        await eventually("a segment answered by the new version") { origin.requests.count >= 2 }
        let started = ContinuousClock.now
        origin.release(0)
        await #expect(throws: DownloadError.self) { try await download.completion() }
        #expect(ContinuousClock.now - started < .seconds(10))
        guard case .failed(.transfer(let reason)) = download.state else {
            Issue.record("expected the download to fail as the resource changed, got \(download.state)")
            return
        }
        // Whichever segment fails first (one reading the change, or one
        // planning while the fetcher drops the changed entry), the change is told.
        #expect(reason.contains("changed at the origin"), "\(reason)")
        // The old entry, if still there, is unpinned and holds old bytes only.
        #expect(try test.store.info(forKey: key)?.isPinned != true)
        for range in try test.store.cachedRanges(forKey: key) {
            let stored = try test.store.read(forKey: key, range: range)
            #expect(stored == Self.old[range], "bytes \(range) are not the old version's")
        }
    }

    /// The entry a session serves is replaced behind its back (another
    /// process puts other bytes at the key): the session reads on from the
    /// origin, uncached, and never hands out the other entry's bytes.
    @Test func aSessionWhoseEntryIsReplacedPlaysOnFromTheOrigin() async throws {
        let origin = FakeOrigin(versions: [.init(bytes: Self.old, etag: "\"old\"", contentType: "audio/mpeg")])
        let test = try TestCache(
            configuration: StreamingConfiguration(chunksPerRequest: 4, stallTimeout: .seconds(30)), origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let player = test.player(Self.url)
        let (_, body, _) = try await player.play()
        #expect(body == Self.old)
        #expect(try await test.waitUntilComplete(Self.url))
        let served = try #require(try test.store.info(forKey: key)).version

        let foreign = FakeOrigin.content(count: Self.old.count, seed: 3)
        try test.store.put(foreign, forKey: key)
        #expect(try test.store.info(forKey: key)?.version != served)
        let before = test.origin.bodyBytes

        let middle = await player.load(offset: 100_000, length: 60_000)
        #expect(middle.error == nil)
        #expect(middle.data == Self.old[100_000..<160_000])
        #expect(test.origin.bodyBytes > before)
        #expect(await player.loader.cachingSkippedReason != nil)
        // The other entry is left as it was.
        #expect(try test.store.data(forKey: key) == foreign)
        #expect(try test.store.verify().isClean)
    }
}
