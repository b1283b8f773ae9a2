// On Linux only the check package Tests/AVFoundationCheck compiles this
// (with AVFOUNDATION_STAND_IN, against its API stand-in of AVFoundation);
// MediaStreaming itself never does, whatever canImport says there.
#if canImport(AVFoundation) && !os(watchOS) && (!os(Linux) || AVFOUNDATION_STAND_IN)
    import AVFoundation
    import Foundation
    #if AVFOUNDATION_STAND_IN
        import MediaStreaming
    #endif

    /// An `AVPlayerItem` whose bytes go through a ``StreamingItem``: the
    /// drop-in for `CachingPlayerItem`. Only glue: the asset's URL gets a
    /// custom scheme (`mediacache-https`, no underscores, so `URL(string:)`
    /// parses it on iOS 17) so that AVFoundation asks ``ResourceLoaderBridge``,
    /// which hands every request to the item's platform-neutral loader.
    ///
    /// Like `AVPlayerItem`, it is main-actor isolated: create it on the main actor.
    public final class CachingAVPlayerItem: AVPlayerItem {
        /// The platform-neutral item (delegate, events, download).
        public nonisolated let streamingItem: StreamingItem
        private let bridge: ResourceLoaderBridge

        /// An item for `url` in ``StreamingCache/shared``, cached under
        /// `cacheKey` (the cache's ``CacheKeyPolicy`` when `nil`).
        ///
        /// One initialiser rather than `init(url:)` beside `init(url:cacheKey:)`:
        /// an `init(url:)` here would override AVPlayerItem's `nonisolated`
        /// `init(url:)` with a main-actor one, which Swift 6 rejects.
        public convenience init(url: URL, cacheKey: String? = nil) {
            let item = cacheKey.map { StreamingItem(url: url, cacheKey: $0) } ?? StreamingItem(url: url)
            self.init(streamingItem: item)
        }

        /// An item playing `streamingItem`.
        public init(streamingItem: StreamingItem) {
            self.streamingItem = streamingItem
            let bridge = ResourceLoaderBridge(loader: streamingItem.loader)
            self.bridge = bridge
            let asset = AVURLAsset(url: ResourceLoaderBridge.customURL(for: streamingItem.url))
            asset.resourceLoader.setDelegate(bridge, queue: bridge.queue)
            super.init(asset: asset, automaticallyLoadedAssetKeys: nil)
        }
    }
#endif
