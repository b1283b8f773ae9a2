import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaStore
import MediaStreaming
import Testing

/// `cachetool rm` removes what it is asked to, and says on standard error
/// whom that takes something from (the entry's holders): a download
/// queue's download, the queue's own index, another holder.
@Suite struct RemoveWarningTests {
    @Test func removingWhatSomeoneKeepsIsSaid() async throws {
        let directory = try TemporaryDirectory("rm-warnings")
        defer { directory.remove() }
        let path = directory.path("store")
        let url = URL(string: "http://origin.test/album/1.mp3")!
        do {
            let store = try MediaStore(directory: URL(fileURLWithPath: path))
            for key in ["queued-track", "cancelled-track", "pinned-by-app", "plain"] {
                try store.put(Data(repeating: 1, count: 4096), forKey: key)
            }
            let queued = DownloadRecord(url: url, cacheKey: "queued-track", status: .completed, queueOrder: 1)
            try store.hold("queued-track", by: DownloadQueue.holder(of: queued.id))
            try store.setPinned(true, forKey: "pinned-by-app")
            try store.hold("pinned-by-app", by: OfflineDownloader.holder(ofKey: "pinned-by-app"))
            try DownloadIndex(store: store).save([
                queued,
                DownloadRecord(
                    url: url, cacheKey: "cancelled-track", status: .failed(.cancelled), queueOrder: 2),
            ])
        }

        let removed = try await ToolProcess.cachetool([
            "-s", path, "rm", "queued-track", "cancelled-track", "pinned-by-app", "plain",
        ])
        #expect(removed.status == 0, "\(removed.errors)")
        let lines = removed.errors.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "cachetool: queued-track belongs to a download of the store's download queue (completed): "
                    + "the queue still counts on it and downloads it again; remove the download through the queue to let it go",
                "cachetool: pinned-by-app was held (kept from eviction) by app, offline/pinned-by-app",
            ], "\(removed.errors)")
        // Everything asked for is gone; the queue's index is not.
        let listed = try await ToolProcess.cachetool(["-s", path, "ls"]).text
        #expect(
            !listed.contains("track") && !listed.contains("pinned-by-app") && !listed.contains("plain"), "\(listed)")

        // What the warning says: the queue takes the completed download up again.
        do {
            let store = try MediaStore(directory: URL(fileURLWithPath: path))
            let records = try DownloadIndex(store: store).load()
            #expect(records.first { $0.cacheKey == "queued-track" }?.status == .queued)
        }

        let index = try await ToolProcess.cachetool(["-s", path, "rm", DownloadIndex.key])
        #expect(index.status == 0)
        #expect(
            index.errors
                == "cachetool: \(DownloadIndex.key) is the download queue's index: its downloads are forgotten, and their entries stay held\n"
        )
    }

    /// An HLS asset downloaded by the queue under a cache key of its own:
    /// its master is stored under the key policy's key, and its URL,
    /// recorded in the entry, finds the download.
    @Test func removingAQueuedHLSAssetUnderItsOwnKeyIsSaid() async throws {
        let directory = try TemporaryDirectory("rm-warnings-hls")
        defer { directory.remove() }
        let path = directory.path("store")
        let master = URL(string: "http://origin.test/hls/master.m3u8")!
        let masterKey = "policy:hls/master"
        do {
            let store = try MediaStore(directory: URL(fileURLWithPath: path))
            let download = DownloadRecord(
                url: master, cacheKey: "album 7", kind: "hls", status: .completed, queueOrder: 2)
            let segmentURL = URL(string: "http://origin.test/hls/0.ts")!
            let playlist = HLSResource(
                kind: .masterPlaylist, url: master, cacheKey: HLSResourceKey(key: masterKey), playlistURL: nil)
            let segments = ["policy:hls/0.ts", "policy:hls/1.ts"].map { key in
                (
                    key,
                    HLSResource(
                        kind: .segment, url: segmentURL, cacheKey: HLSResourceKey(key: key), playlistURL: master)
                )
            }
            for (key, resource) in [(masterKey, playlist)] + segments {
                try store.put(Data(repeating: 1, count: 4096), forKey: key)
                try store.setMetadata(
                    HLSEntryMetadata.metadata(
                        for: resource, assetKey: masterKey, playlistKey: nil, mimeType: "application/octet-stream"),
                    forKey: key)
                try store.hold(key, by: DownloadQueue.holder(of: download.id))
            }
            // A progressive download of the master's file is not the asset's.
            try DownloadIndex(store: store).save([
                DownloadRecord(url: master, cacheKey: "master file", status: .queued, queueOrder: 1),
                download,
            ])
        }

        // A segment of it first: named with its asset and what the queue does.
        let segment = try await ToolProcess.cachetool(["-s", path, "rm", "policy:hls/0.ts"])
        #expect(segment.status == 0, "\(segment.errors)")
        #expect(
            segment.errors
                == "cachetool: policy:hls/0.ts belongs to the HLS asset \(masterKey), which a download of the store's "
                + "download queue holds (completed): the queue still counts on it and downloads it again; "
                + "remove the download through the queue to let it go\n"
        )
        let removed = try await ToolProcess.cachetool(["-s", path, "rm", masterKey])
        #expect(removed.status == 0, "\(removed.errors)")
        let lines = removed.errors.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "cachetool: \(masterKey) belongs to a download of the store's download queue (completed): "
                    + "the queue still counts on it and downloads it again; remove the download through the queue to let it go",
                "cachetool: removed the HLS asset \(masterKey) (2 entries)",
            ], "\(removed.errors)")
    }
}
