#if canImport(AVFoundation) && !os(watchOS)
    import AVFoundation
    import Foundation

    /// An `AVPlayerItem` whose bytes go through a ``StreamingItem``: the
    /// drop-in for `CachingPlayerItem`. Only glue: the asset's URL gets a
    /// custom scheme (`mediacache-https`, no underscores, so `URL(string:)`
    /// parses it on iOS 17) so that AVFoundation asks ``ResourceLoaderBridge``,
    /// which hands every request to the item's platform-neutral loader.
    public final class CachingAVPlayerItem: AVPlayerItem {
        /// The platform-neutral item (delegate, events, download).
        public let streamingItem: StreamingItem
        private let bridge: ResourceLoaderBridge

        /// An item for `url` in ``StreamingCache/shared``.
        public convenience init(url: URL) {
            self.init(streamingItem: StreamingItem(url: url))
        }

        /// An item for `url` in ``StreamingCache/shared``, cached under `cacheKey`.
        public convenience init(url: URL, cacheKey: String) {
            self.init(streamingItem: StreamingItem(url: url, cacheKey: cacheKey))
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
