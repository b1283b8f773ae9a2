import Foundation

/// Why an HLS asset cannot be planned for offline download.
public enum HLSPlanError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The media playlist has no `EXT-X-ENDLIST`: it is live (or a running
    /// event) and may still grow, so it must not be kept as finished.
    case liveContent(playlistURL: URL)
    /// A key offline playback cannot use: SAMPLE-AES or SAMPLE-AES-CTR, a
    /// FairPlay (`skd://`) key, or a `KEYFORMAT` other than `identity`.
    /// Such keys need the platform's key session (persistable FairPlay
    /// keys), which a cache cannot provide.
    case unsupportedEncryption(method: PlaylistKey.Method, keyFormat: String, keyURL: URL?, playlistURL: URL)
    /// The media playlist the selection needs was not given.
    case missingMediaPlaylist(URL)

    public var description: String {
        switch self {
        case .liveContent(let url):
            "\(url.absoluteString.prefix(200)) is live (no EXT-X-ENDLIST); only finished playlists can be downloaded"
        case .unsupportedEncryption(let method, let keyFormat, let keyURL, let playlistURL):
            "\(playlistURL.absoluteString.prefix(200)) uses \(method.rawValue) keys (KEYFORMAT \(keyFormat.prefix(100))"
                + "\(keyURL.map { ", " + $0.absoluteString.prefix(200) } ?? "")), which cannot be kept for offline "
                + "playback (FairPlay needs persistable keys from the platform)"
        case .missingMediaPlaylist(let url): "the media playlist \(url.absoluteString.prefix(200)) was not given"
        }
    }
}
