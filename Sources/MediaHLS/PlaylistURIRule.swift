import Foundation
import MediaDownloads
import MediaStreaming

/// Which URIs of a playlist may be fetched: those on the playlist's own
/// origin (scheme, host, port: `WebOrigin`), and those that pass
/// ``allows``. Pure.
///
/// The playlist's origin was chosen by the caller; every other origin a
/// playlist names was chosen by whoever wrote the playlist, so it must pass
/// the check: a `MediaServer` checks its allowlist, an ``HLSDownloader``
/// by default ``publicHosts`` (DNS names and public addresses, never a
/// loopback, link-local, private, unspecified or non-canonical address).
/// `data:` and `skd:` URIs are not fetched through the network and are
/// left to the caller; any other URI without an `http`/`https` origin
/// (`ftp:`, which URLSession fetches too, or `http:` without a host) is refused.
public struct PlaylistURIRule: Sendable {
    /// Whether a URI on another origin than its playlist's may be fetched.
    public var allows: @Sendable (URL) -> Bool

    /// - parameter allows: whether a URI on another origin than its playlist's may be fetched.
    public init(allows: @escaping @Sendable (URL) -> Bool) { self.allows = allows }

    /// Any DNS name or public address (`HostClass/isPublic`); no loopback,
    /// link-local, private or odd address unless it is the playlist's own origin.
    public static let publicHosts = PlaylistURIRule { HostClass(url: $0).isPublic }

    /// Why `uri`, read in the playlist at `playlist`, may not be fetched; nil when it may.
    public func refusal(of uri: URL, in playlist: URL) -> String? {
        guard let origin = WebOrigin(uri) else {
            if let scheme = uri.scheme?.lowercased(), scheme == "data" || scheme == "skd" { return nil }
            return "\(uri.scheme ?? "a URI without a scheme") is not an http or https URL with a host"
        }
        if WebOrigin.same(uri, playlist) || allows(uri) { return nil }
        return "\(origin) (\(HostClass(host: origin.host))) is neither the playlist's origin nor allowed"
    }
}
