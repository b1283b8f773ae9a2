import Foundation

/// Gives an HLS playlist the local URL that plays it from a cache: what a
/// loopback server (`MediaServer`, which conforms) offers the layers
/// below it, passed to them by the app rather than looked up.
/// `CachingAVPlayerItem` takes one: AVPlayer then plays the asset through
/// the server, which rewrites the playlists and serves segments from the
/// cache, rather than through a resource loader (serving segment bytes
/// through `AVAssetResourceLoader` is known to fail, fMP4 init segments
/// above all).
public protocol PlaylistLocalizer: Sendable {
    /// The local URL that plays the playlist `url` from `cache`; `nil` when
    /// it cannot now (it does not serve that cache, or is stopped).
    func localURL(forPlaylist url: URL, cache: StreamingCache) -> URL?
}
