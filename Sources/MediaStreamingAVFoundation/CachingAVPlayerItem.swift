// The module is empty on Linux: only the check package
// Tests/AVFoundationCheck compiles this there (with AVFOUNDATION_STAND_IN,
// against its API stand-in of AVFoundation).
#if canImport(AVFoundation) && !os(watchOS) && (!os(Linux) || AVFOUNDATION_STAND_IN)
    import AVFoundation
    import Foundation
    import HLSPlaylist
    import MediaStreaming

    /// An `AVPlayerItem` whose bytes go through a ``StreamingItem``: the
    /// drop-in for `CachingPlayerItem`. Only glue: the asset's URL gets a
    /// custom scheme (`mediacache-https`, no underscores, so `URL(string:)`
    /// parses it on iOS 17) so that AVFoundation asks ``ResourceLoaderBridge``,
    /// which hands every request to the item's platform-neutral loader.
    ///
    /// An HLS playlist (`.m3u8`, `.m3u`) is not played through the resource
    /// loader (serving segment bytes through it is known to fail, fMP4 init
    /// segments above all): the asset gets the local URL the item's
    /// ``PlaylistLocalizer`` gives it (the app's `MediaServer` over the
    /// item's cache), which rewrites the playlists and serves the segments
    /// from the cache; with none, or none for that cache or running, the
    /// origin URL itself (AVPlayer streams it, uncached).
    ///
    /// Like `AVPlayerItem`, it is main-actor isolated: create it on the main actor.
    public final class CachingAVPlayerItem: AVPlayerItem {
        /// The platform-neutral item (delegate, events, download).
        public nonisolated let streamingItem: StreamingItem
        /// The resource loader's delegate; nil for HLS (not played through it).
        private let bridge: ResourceLoaderBridge?

        /// An item for `url` in ``StreamingCache/shared``, cached under
        /// `cacheKey` (the cache's ``CacheKeyPolicy`` when `nil`).
        ///
        /// One initialiser rather than `init(url:)` beside `init(url:cacheKey:)`:
        /// an `init(url:)` here would override AVPlayerItem's `nonisolated`
        /// `init(url:)` with a main-actor one, which Swift 6 rejects.
        ///
        /// - parameter playlists: where an HLS playlist plays (the app's `MediaServer`).
        public convenience init(url: URL, cacheKey: String? = nil, playlists: (any PlaylistLocalizer)? = nil) {
            let item = cacheKey.map { StreamingItem(url: url, cacheKey: $0) } ?? StreamingItem(url: url)
            self.init(streamingItem: item, playlists: playlists)
        }

        /// An item playing `streamingItem`.
        ///
        /// - parameter playlists: where an HLS playlist plays (the app's `MediaServer`).
        public init(streamingItem: StreamingItem, playlists: (any PlaylistLocalizer)? = nil) {
            self.streamingItem = streamingItem
            let url = streamingItem.url
            if HLSContentType.isPlaylist(url) {
                self.bridge = nil
                let local = playlists?.localURL(forPlaylist: url, cache: streamingItem.loader.cache)
                super.init(asset: AVURLAsset(url: local ?? url), automaticallyLoadedAssetKeys: nil)
                return
            }
            let bridge = ResourceLoaderBridge(loader: streamingItem.loader)
            self.bridge = bridge
            let asset = AVURLAsset(url: ResourceLoaderBridge.customURL(for: url))
            asset.resourceLoader.setDelegate(bridge, queue: bridge.queue)
            super.init(asset: asset, automaticallyLoadedAssetKeys: nil)
        }
    }
#endif
