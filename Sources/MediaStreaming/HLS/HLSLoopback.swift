import Foundation
import MediaStore
import MediaSupport

/// Where HLS of a ``StreamingCache`` plays on this device: the local URL a
/// running loopback server (`MediaServer`, which registers itself for its
/// cache from `start()` to `stop()`) gives a playlist. `CachingAVPlayerItem`
/// asks it for an HLS URL: AVPlayer then plays the asset through the
/// server, which rewrites the playlists and serves segments from the cache,
/// rather than through a resource loader (serving segment bytes through
/// `AVAssetResourceLoader` is known to fail, fMP4 init segments above all).
public enum HLSLoopback {
    private struct Registration {
        weak var cache: StreamingCache?
        let provider: @Sendable (URL) -> URL?
    }

    private static let registrations = Locked<[ObjectIdentifier: Registration]>([:])

    /// Whether `url` names an HLS playlist (`.m3u8` or `.m3u`).
    public static func isPlaylist(_ url: URL) -> Bool {
        ["m3u8", "m3u"].contains(url.pathExtension.lowercased())
    }

    /// Registers `provider` (a server's local URL for a playlist URL; nil
    /// when it cannot play it now) for `cache`, under `owner`.
    public static func register(
        _ owner: ObjectIdentifier, cache: StreamingCache, provider: @escaping @Sendable (URL) -> URL?
    ) {
        registrations.withLock { $0[owner] = Registration(cache: cache, provider: provider) }
    }

    /// Removes what `owner` registered.
    public static func unregister(_ owner: ObjectIdentifier) {
        _ = registrations.withLock { $0.removeValue(forKey: owner) }
    }

    /// The local URL that plays the playlist `url` of `cache`; nil when no
    /// server of that cache runs.
    public static func localURL(for url: URL, cache: StreamingCache) -> URL? {
        let providers = registrations.withLock { registrations -> [@Sendable (URL) -> URL?] in
            registrations = registrations.filter { $0.value.cache != nil }
            return registrations.values.filter { $0.cache === cache }.map(\.provider)
        }
        for provider in providers {
            if let local = provider(url) { return local }
        }
        return nil
    }
}
