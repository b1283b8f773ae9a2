import Foundation
import HLSPlaylist
import MediaDownloads
import MediaHLS
import MediaServer
import MediaStore
import MediaStreaming

/// The Swift blocks of the README's streaming, HLS and server quick starts
/// and of the MediaStreaming and MediaServer articles, compiled as shown
/// (`Tools/check-docs` fails when a block is not one of these regions).
/// Compiled only: they reach origins on the network.
final class StreamingDocSnippets: StreamingItemDelegate {
    func localURL(for url: URL, _ range: ByteRange?) -> URL? { nil }

    func readmeOfflineHLS(cachesURL: URL, masterURL: URL) async throws {
        // snippet: readme-hls-queue (README.md)
        let cache = StreamingCache(store: try MediaStore(directory: cachesURL.appendingPathComponent("media")))
        let resources = HLSResourceStore(cache: cache)  // one per cache: the queue and the server share fetches
        let hls = HLSDownloadPerformer(
            variant: .highestBandwidth(atMost: 2_000_000), audio: .languages(["en"]), resources: resources)
        let queue = try await DownloadQueue.open(cache: cache, performers: [hls])
        let record = try await queue.enqueue(masterURL, kind: HLSDownloadPerformer.kind, conditions: .unmetered)
        try await queue.completion(of: record.id)  // kept across relaunches; resumes what is missing

        let server = MediaServer(resources: resources)
        try server.start()
        let offlineURL = server.hlsURL(for: masterURL)  // plays with no network, in any player
        // end snippet
        _ = offlineURL
    }

    func readmeServer(cachesURL: URL) throws {
        // snippet: readme-server (README.md)
        let cache = StreamingCache(store: try MediaStore(directory: cachesURL.appendingPathComponent("media")))
        let server = MediaServer(cache: cache)
        try server.start()  // 127.0.0.1, a port the system picks
        let local = server.url(for: URL(string: "https://cdn.example.com/music/a.mp3")!)
        // Give `local` to VLC, mpv, ffplay, a web view: bytes come from the store, holes from the origin.
        server.stop()
        // end snippet
        _ = local
    }

    func serverGettingStarted(cachesURL: URL) throws {
        // snippet: server-start (Sources/MediaServer/MediaServer.docc/GettingStarted.md)
        let cache = StreamingCache(store: try MediaStore(directory: cachesURL))
        let server = MediaServer(cache: cache)
        try server.start()  // 127.0.0.1, a port the OS picks
        let local = server.url(for: URL(string: "https://cdn.example.com/music/a.mp3")!)
        // Give `local` to any player.
        // end snippet
        _ = local
        // snippet: server-watch (Sources/MediaServer/MediaServer.docc/GettingStarted.md)
        Task { for await event in server.events() { print(event) } }
        let statistics = server.statistics  // connections, statuses, bytes, restarts
        _ = server.ensureListening()  // after the app returns to the foreground
        server.stop()  // ends every connection and its downloads
        // end snippet
        _ = statistics
    }

    func serverAllowlist(cachesURL: URL) throws {
        // snippet: server-allowlist (Sources/MediaServer/MediaServer.docc/GettingStarted.md)
        let allowlist = try OriginAllowlist(validating: [
            "https://origin.example.com/live/",  // the masters
            "cdn-a.example.net",  // https on 443, http on 80
            "*.cdn-b.example.org",  // DNS names only
            "127.0.0.1:8080",  // an address: name its port
        ])
        let cache = StreamingCache(
            store: try MediaStore(directory: cachesURL),
            origin: HTTPOrigin(redirects: allowlist.redirectPolicy()))
        let server = MediaServer(cache: cache, configuration: MediaServerConfiguration(allowlist: allowlist))
        // end snippet
        _ = server
    }

    func streamingGettingStarted(cachesURL: URL, trackURL: URL) async throws {
        // snippet: streaming-cache (Sources/MediaStreaming/MediaStreaming.docc/GettingStarted.md)
        let store = try MediaStore(directory: cachesURL, configuration: StoreConfiguration(sizeLimit: 512 << 20))
        let cache = StreamingCache(
            store: store,
            origin: HTTPOrigin(headers: ["Authorization": "Bearer …"]),
            configuration: StreamingConfiguration(cacheKeyPolicy: .droppingQueryItems(["token"])))
        // end snippet
        // snippet: streaming-play (Sources/MediaStreaming/MediaStreaming.docc/GettingStarted.md)
        let item = StreamingItem(url: trackURL, cache: cache)
        item.delegate = self  // readyToPlay, didDownloadBytesSoFar, playbackStalled, …
        for await event in item.events { print(event) }
        // end snippet
        // snippet: streaming-offline (Sources/MediaStreaming/MediaStreaming.docc/GettingStarted.md)
        let downloader = OfflineDownloader(cache: cache, maxParallelDownloads: 3)
        let download = downloader.download(trackURL)
        for await update in download.progressUpdates() { print(update.fraction) }
        try downloader.release(trackURL)  // its hold released: evictable unless someone else holds it
        // end snippet
    }

    func hlsDownload(cache: StreamingCache, masterURL: URL) async throws {
        // snippet: hls-download (Sources/MediaStreaming/MediaStreaming.docc/HTTPLiveStreaming.md)
        let downloader = HLSDownloader(cache: cache)  // parallelFetches: 4
        let download = downloader.download(
            masterURL, variant: .highestBandwidth(atMost: 2_000_000),
            audio: .languages(["en"]), subtitles: .automatic)
        for await p in download.progressUpdates() {  // also download.progress (Foundation.Progress, in resources)
            print(p.bytes, p.segments, p.totalSegments, p.seconds, p.totalSeconds, p.state)
        }
        try await download.completion()  // throws DownloadError
        // Augment later: only the French playlist and segments are fetched.
        try await downloader.download(
            masterURL, variant: .highestBandwidth(atMost: 2_000_000),
            audio: .languages(["en", "fr"])
        ).completion()
        let server = MediaServer(cache: cache); try server.start()
        let local = server.hlsURL(for: masterURL)  // or server.url(for:) of any .m3u8; plays offline
        try await downloader.release(masterURL)  // lets go of its holds; remove(_:) deletes it
        // end snippet
        _ = local
    }

    func hlsPureLayer(
        data: Data, masterURL: URL, mediaPlaylists: [MediaPlaylist], text: String, playlistURL: URL, url: URL
    ) throws {
        // snippet: hls-pure (Sources/MediaStreaming/MediaStreaming.docc/HTTPLiveStreaming.md)
        let playlist = try PlaylistParser.parse(data, url: masterURL)  // throws PlaylistError(line:reason:)
        guard case .master(let master) = playlist else { return }
        let selection = try VariantSelector.select(
            from: master, variant: .highestBandwidth(atMost: 2_000_000),
            audio: .languages(["en", "fr"]), subtitles: .automatic)
        let plan = try HLSDownloadPlanner.plan(
            master: master, selection: selection, mediaPlaylists: mediaPlaylists,
            cacheKey: .droppingQueryItems(["token"]))  // throws HLSPlanError
        let local = try PlaylistRewriter.rewrite(text, url: playlistURL, byteRanges: .remove) { reference in
            localURL(for: reference.url, reference.byteRange)  // nil keeps the absolute origin URL
        }
        let type = HLSContentType.mimeType(for: url, kind: .segment, mediaType: .audio)  // "audio/mp4" for .m4s
        // end snippet
        _ = (plan, local, type)
    }

    func playWhileCaching(cachesURL: URL, trackURL: URL) async throws {
        // snippet: play-while-caching (Sources/MediaStreaming/MediaStreaming.docc/PlayWhileCaching.md)
        let store = try MediaStore(directory: cachesURL, configuration: StoreConfiguration(sizeLimit: 512 << 20))
        let cache = StreamingCache(
            store: store,
            origin: HTTPOrigin(headers: ["Authorization": "Bearer …"]),  // forwarded on every request
            configuration: StreamingConfiguration(cacheKeyPolicy: .droppingQueryItems(["token"])))

        // Anywhere (Linux too): the platform-neutral item and its loader.
        let item = StreamingItem(url: trackURL, cache: cache)
        item.delegate = self  // readyToPlay, didDownloadBytesSoFar, playbackStalled, …
        item.download()  // optional: fetch every missing byte now
        for await event in item.events { print(event) }  // the same events as an AsyncSequence

        // Offline (AVAssetDownloadTask's role): pinned until released.
        let downloader = OfflineDownloader(cache: cache, maxParallelDownloads: 3)
        let download = downloader.download(trackURL)
        // Or download.progress (Foundation.Progress).
        for await update in download.progressUpdates() { print(update.fraction) }
        download.pause(); download.resume(); download.cancel()  // safe from any thread, even at once
        try downloader.release(trackURL)
        // Under a key of your own: found and released by that key.
        let owned = downloader.download(trackURL, cacheKey: "track-42")
        let same = downloader.download(forCacheKey: "track-42")  // === owned
        try downloader.release(cacheKey: "track-42")  // release(trackURL) would not reach it
        // end snippet
        _ = (owned, same)
    }

    func scheduling(store: MediaStore, trackURL: URL, bonusURL: URL, nextURL: URL, playlist: [URL], index: Int)
        async throws
    {
        // snippet: scheduling (Sources/MediaStreaming/MediaStreaming.docc/Scheduling.md)
        let cache = StreamingCache(store: store)

        // A persistent queue: restored after a relaunch, in start/resume order.
        let queue = try await DownloadQueue.open(
            cache: cache,
            configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 2, storageFloor: 500 << 20),
            monitor: SystemConditionsMonitor(volume: store.directory))  // or a SettableConditionsMonitor fed by the app
        let album = try await queue.enqueue(trackURL, conditions: .unmetered)  // Wi-Fi only
        try await queue.enqueue(bonusURL, conditions: DownloadConditions(requiresCharging: true, isDiscretionary: true))
        for record in await queue.downloads { print(record.url, record.status) }  // .waiting([.expensiveNetwork]) …
        for await aggregate in queue.progressUpdates() { print(aggregate.fractionCompleted, aggregate.throughput ?? 0) }
        let batch = queue.progress  // Foundation.Progress of the batch
        try await queue.stop(album.id); try await queue.resume(album.id)  // resume = back of the queue
        try await queue.cancelAll()  // each fails with DownloadError.cancelled, pins released
        try await queue.completion(of: album.id)  // throws DownloadError

        // Preloading: the first seconds of the next tracks, yielding to the player.
        let preloader = Preloader(cache: cache)
        preloader.preload(nextURL, duration: 10)  // MP3 Xing/VBRI/frames, MP4 moov, FLAC: PlaybackPrefix
        preloader.preload(nextURL, bytes: 512 << 10)
        preloader.cancelPreload(nextURL)
        // Preloads the next three, cancels those that fell out.
        preloader.keepWarm(playlist, current: index, ahead: 3, amount: .duration(seconds: 10))
        // end snippet
        _ = batch
    }
}
