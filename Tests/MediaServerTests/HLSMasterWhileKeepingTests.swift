import Foundation
import HLSPlaylist
import MediaServer
import MediaStore
import Testing

@testable import MediaDownloads
@testable import MediaHLS
@testable import MediaStreaming

/// A master playlist the server hands out while a download of it pins
/// its playlists: a pinned master is served as its downloaded selection
/// (the media playlists pinned), so it must not be pinned before them, nor
/// by a queue's pin of a running download, nor offer a variant without its
/// audio; a release or remove during the pins leaves nothing pinned.
@Suite("MediaServer: a master served while its download keeps its playlists", .serialized, .timeLimit(.minutes(2)))
struct HLSMasterWhileKeepingTests {
    @Test("paused before the English playlist is pinned, the master served still has its audio")
    func keepsTheMasterLast() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)
        let english = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/english.m3u8")).storeKey
        let (reached, release) = Self.hold(downloader, at: english)
        defer { downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        let download = downloader.download(master, variant: .first, audio: .languages(["en"]))
        for await _ in reached { break }

        let during = try await Self.served(master, by: fixture)
        #expect(during.contains("TYPE=AUDIO") && during.contains("LANGUAGE=\"en\""), "\(during)")

        release.yield()
        try await download.completion()
        // Kept: the downloaded selection, English audio and no French.
        let after = try await Self.served(master, by: fixture)
        #expect(after.contains("LANGUAGE=\"en\"") && !after.contains("LANGUAGE=\"fr\""), "\(after)")
    }

    /// The master playlist `master` as the server hands it out now.
    static func served(_ master: URL, by fixture: ServerFixture) async throws -> String {
        String(decoding: try await HLSPlaybackTests.get(fixture.server.hlsURL(for: master)).body, as: UTF8.self)
    }

    /// Polls every 10 ms, `polls` times, until `master`'s entry is pinned:
    /// time for a run that should pin nothing more to do it anyway.
    static func waitForAPin(of master: URL, in downloader: HLSDownloader, polls: Int) async throws {
        let key = downloader.resources.resourceKey(for: master)
        for _ in 0..<polls {
            if try await downloader.resources.info(key)?.isPinned == true { return }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Holds the download at the pin of `key` until `release` yields.
    static func hold(_ downloader: HLSDownloader, at key: String) -> (AsyncStream<Void>, AsyncStream<Void>.Continuation)
    {
        let (reached, reachedGate) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock {
            $0 = { pinned in
                guard pinned == key else { return }
                reachedGate.yield()
                // Held even once the download is cancelled (a cancelled task's `for await` ends at once).
                await Task.detached { for await _ in released { break } }.value
            }
        }
        return (reached, release)
    }

    @Test("augmenting with a variant of another audio group: the served master never offers it without audio")
    func augmentWithOtherAudioGroup() async throws {
        let fixture = try ServerFixture()
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="lo",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="english.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="hi",NAME="English HQ",LANGUAGE="en",DEFAULT=YES,URI="french.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=92400,CODECS="avc1.42d00b,mp4a.40.2",AUDIO="hi"
            high.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=59400,CODECS="avc1.42c00a,mp4a.40.2",AUDIO="lo"
            low.m3u8

            """
        try Data(text.utf8).write(to: fixture.directory.appendingPathComponent("root/HLS/master/groups.m3u8"))
        let master = fixture.originURL("HLS/master/groups.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)
        try await downloader.download(master, variant: .lowestBandwidth).completion()

        // Second download: the high variant and its group's audio (held before that audio is pinned).
        let audio = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/french.m3u8")).storeKey
        let (reached, release) = Self.hold(downloader, at: audio)
        defer { downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        let download = downloader.download(master, variant: .first)
        for await _ in reached { break }
        let served = try await Self.served(master, by: fixture)
        release.yield()
        try await download.completion()
        let parsed = try #require(try PlaylistParser.parse(served, url: master).master)
        #expect(parsed.variants.allSatisfy { $0.audioGroup != nil }, "\(served)")
    }

    @Test("release while the download pins its playlists: nothing of the asset stays pinned")
    func releaseDuringKeep() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)
        let english = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/english.m3u8")).storeKey
        let (reached, release) = Self.hold(downloader, at: english)
        defer { downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        let download = downloader.download(master, variant: .first, audio: .languages(["en"]))
        for await _ in reached { break }

        try await downloader.release(master)  // the user deletes the download
        #expect(download.state == .cancelled)
        release.yield()
        try await Self.waitForAPin(of: master, in: downloader, polls: 100)
        let pinned = try downloader.entries(of: master).filter(\.isPinned).map(\.key)
        #expect(pinned.isEmpty, "pinned after release: \(pinned)")
    }

    @Test("remove while the download pins its playlists: the asset is gone")
    func removeDuringKeep() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)
        let english = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/english.m3u8")).storeKey
        let (reached, release) = Self.hold(downloader, at: english)
        defer { downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        _ = downloader.download(master, variant: .first, audio: .languages(["en"]))
        for await _ in reached { break }

        try await downloader.remove(master)
        release.yield()
        try await Self.waitForAPin(of: master, in: downloader, polls: 100)
        let left = try downloader.entries(of: master).map { "\($0.key) pinned=\($0.isPinned)" }
        #expect(left.isEmpty, "left after remove: \(left)")
    }

    @Test("a queued HLS download: the queue's pin of its running entries does not serve a master without audio")
    func queuePinsTheMasterEarly() async throws {
        let fixture = try ServerFixture()
        let master = fixture.originURL("HLS/master/master.m3u8")
        let downloader = HLSDownloader(resources: fixture.server.resources, parallelFetches: 1)  // the server's store
        let english = downloader.resources.resourceKey(for: fixture.originURL("HLS/master/english.m3u8")).storeKey
        let (reached, release) = Self.hold(downloader, at: english)
        defer { downloader.resources.cache.configuration.resourceStoreHooks.keep.withLock { $0 = nil } }
        let performer = HLSDownloadPerformer(
            variant: .first, audio: .languages(["en"]), parallelFetches: 1, resources: fixture.server.resources)
        let queue = try await DownloadQueue.open(
            cache: fixture.cache, configuration: DownloadQueueConfiguration(pollInterval: .milliseconds(20)),
            performers: [performer])
        let record = try await queue.enqueue(master, kind: HLSDownloadPerformer.kind)
        for await _ in reached { break }
        // The queue's tick pins "a running download's entries as soon as it has bytes".
        try await Self.waitForAPin(of: master, in: downloader, polls: 200)
        let served = try await Self.served(master, by: fixture)
        release.yield()
        try await queue.completion(of: record.id)
        #expect(served.contains("TYPE=AUDIO") && served.contains("AUDIO=\"audio\""), "\(served)")
    }
}
