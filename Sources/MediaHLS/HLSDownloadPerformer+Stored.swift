import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

extension HLSDownloadPerformer {
    /// Whether every resource of `record`'s download (this performer's
    /// selection of its master) is complete in `store`: the plan is made
    /// again from the stored playlists, with no request. A segment dropped
    /// as corrupt, or removed by hand, makes it `false`, and the queue
    /// fetches what is missing; so does a playlist that cannot be read.
    /// Blocking: on the store's read queue.
    package func isStored(_ record: DownloadRecord, in cache: StreamingCache, store: MediaStore) -> Bool {
        let policy = cache.configuration.cacheKeyPolicy
        func stored(_ url: URL) -> Data? {
            try? store.value(forKey: HLSResourceKey(key: cache.cacheKey(for: url)).storeKey, includeExpired: true)?.data
        }
        guard let masterData = stored(record.url),
            let parsed = try? PlaylistParser.parse(masterData, url: record.url)
        else { return false }
        let plan: HLSDownloadPlan
        switch parsed {
        case .master(let master):
            guard
                let selection = try? VariantSelector.select(
                    from: master, variant: variant, audio: audio, subtitles: subtitles)
            else { return false }
            var media: [MediaPlaylist] = []
            for url in selection.mediaPlaylistURLs {
                guard let data = stored(url), case .media(let playlist)? = try? PlaylistParser.parse(data, url: url)
                else { return false }
                media.append(playlist)
            }
            guard
                let made = try? HLSDownloadPlanner.plan(
                    master: master, selection: selection, mediaPlaylists: media, cacheKey: policy)
            else { return false }
            plan = made
        case .media(let media):
            guard let made = try? HLSDownloadPlanner.plan(media: media, cacheKey: policy) else { return false }
            plan = made
        }
        return plan.resources.allSatisfy { resource in
            (try? store.info(forKey: resource.cacheKey.storeKey))??.isComplete == true
        }
    }
}
