import Foundation
import HLSPlaylist
import MediaHLS
import MediaStore
import MediaStreaming
import Testing

/// HLS transfers in the cache's one fetch scheduler: a download's fetches
/// respect the per-host connection limit and yield to a player's.
@Suite(
    "HLS in the fetch scheduler",
    .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(1)))
struct HLSSchedulingTests {
    let server = NginxServer.shared

    @Test("one connection per host: a download waits its turn per segment; a player's segment goes first")
    func playbackSegmentIsNotStarvedByADownload() async throws {
        let configuration = StreamingConfiguration(
            chunksPerRequest: 16, stallTimeout: .seconds(5), connectionsPerHost: 1)
        let test = try TestCache(configuration: configuration)
        let name = "hls-sched-\(UUID().uuidString.prefix(8))"
        // Each segment takes about a second under /slow/ (its rate per response).
        let segment = Data((0..<(NginxServer.slowRate * 9 / 8)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n"
        for index in 0..<2 {
            try server.publish(segment, at: "\(name)-\(index).ts")
            playlist += "#EXTINF:4.0,\n\(name)-\(index).ts\n"
        }
        try server.publish(Data((playlist + "#EXT-X-ENDLIST\n").utf8), at: "\(name).m3u8")
        try server.publish(segment, at: "\(name)-play.ts")

        let downloader = HLSDownloader(cache: test.cache, parallelFetches: 2)
        let download = downloader.download(server.url("slow/\(name).m3u8"))
        let scheduler = test.cache.scheduler
        // Two segment fetches at once, one connection: one busy, one waiting for it.
        var queued = false
        for _ in 0..<500 where !queued {
            let snapshot = scheduler.snapshot
            #expect(snapshot.busy[.download, default: 0] <= 1)
            queued =
                snapshot.busy[.download, default: 0] == 1 && snapshot.waitingForConnection[.download, default: 0] >= 1
            if !queued { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(queued, "the download's fetches never went through the scheduler")

        let resources = downloader.resources
        let url = server.url("slow/\(name)-play.ts")
        let resource = HLSResource(
            kind: .segment, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
        let (data, fetched) = try await resources.data(for: resource, metadata: EntryMetadata(), priority: .playback)
        #expect(data == segment && fetched)
        // The player's segment came first: the download still had segments to fetch.
        #expect(download.state != .completed)
        #expect(download.snapshot.segments < 2)

        try await download.completion()
        #expect(download.snapshot.segments == 2)
        for index in 0..<2 {
            let key = resources.resourceKey(for: server.url("slow/\(name)-\(index).ts")).storeKey
            #expect(try test.store.data(forKey: key) == segment)
        }
        #expect(scheduler.snapshot == FetchScheduler.Snapshot())
    }
}
