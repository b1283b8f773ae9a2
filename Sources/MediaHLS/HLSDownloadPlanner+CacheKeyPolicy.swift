import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStreaming

extension HLSDownloadPlanner {
    /// The plan for `selection` of `master`, each resource keyed by
    /// `cacheKey`'s key for its URL and its byte range.
    public static func plan(
        master: MasterPlaylist, selection: HLSSelection, mediaPlaylists: [MediaPlaylist], cacheKey: CacheKeyPolicy
    ) throws(HLSPlanError) -> HLSDownloadPlan {
        try plan(
            master: master, selection: selection, mediaPlaylists: mediaPlaylists, cacheKey: { cacheKey.key(for: $0) })
    }

    /// The plan for an asset that is a single media playlist, each resource
    /// keyed by `cacheKey`'s key for its URL and its byte range.
    public static func plan(media: MediaPlaylist, cacheKey: CacheKeyPolicy) throws(HLSPlanError) -> HLSDownloadPlan {
        try plan(media: media, cacheKey: { cacheKey.key(for: $0) })
    }
}
