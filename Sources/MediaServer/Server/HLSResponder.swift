import Foundation
import HLSPlaylist
import MediaHLS
import MediaStore
import MediaStreaming

/// Answers the HLS routes of a server: playlists are served with every
/// URI rewritten to a local URL of the server (segment and variant lines,
/// and the `URI="…"` of `EXT-X-KEY`, `EXT-X-MAP`, `EXT-X-MEDIA`,
/// `EXT-X-SESSION-KEY`, `EXT-X-I-FRAME-STREAM-INF`), each (URL, byte range)
/// its own local URL serving exactly those bytes; segments, keys and init
/// segments come from the store, or from the origin and are then kept
/// (shared with an `HLSDownloader` given the same `HLSResourceStore`:
/// a segment fetched for the player is not fetched again by the download,
/// nor the other way round).
///
/// It owns the server's ``RewriteCache``; the origins a rewriting mints go
/// into the server's ``OriginPermissions``, and a URI the rule refuses is
/// told as ``MediaServerEvent/playlistURIRefused(playlist:uri:reason:)``.
final class HLSResponder: Sendable {
    /// Where HLS resources are read and kept.
    let resources: HLSResourceStore
    /// Playlists served lately, by local path: the bytes read and their rewriting.
    let rewrites: RewriteCache
    private let permissions: OriginPermissions
    private let activity: ServerActivity

    init(
        resources: HLSResourceStore, rewriteBudget: Int, permissions: OriginPermissions, activity: ServerActivity
    ) {
        self.resources = resources
        self.rewrites = RewriteCache(budget: rewriteBudget)
        self.permissions = permissions
        self.activity = activity
    }

    /// The body and `Content-Type` of `route`: a playlist rewritten to
    /// local URLs of `address` (held whole, at most `PlaylistLimits/maxBytes`
    /// read), anything else the entry it is stored in (fetched into the store
    /// first), to be read in pieces.
    func response(for route: HLSRoute, address: LocalAddress) async throws(HLSResourceError) -> (
        body: HLSResourceBody, key: HLSResourceKey, mimeType: String
    ) {
        let resources = self.resources
        let resource = HLSResource(
            kind: route.kind, url: route.origin, byteRange: route.byteRange,
            cacheKey: resources.resourceKey(for: route.origin, byteRange: route.byteRange),
            playlistURL: route.isPlaylist ? route.origin : nil, mediaType: route.mediaType)
        let mimeType =
            route.isPlaylist
            ? HLSContentType.playlist
            : HLSContentType.mimeType(for: route.origin, kind: route.kind, mediaType: route.mediaType)
        let origin = route.origin
        let limits = resources.limits.playlist
        let (body, _) = try await resources.resource(
            for: resource,
            metadata: HLSEntryMetadata.metadata(for: resource, assetKey: nil, playlistKey: nil, mimeType: mimeType),
            store: { data in
                // A live media playlist changes: passed through, never kept.
                guard route.isPlaylist else { return true }
                return HLSDownloader.isDownloadable(data, url: origin, limits: limits)
            })
        guard route.isPlaylist, case .bytes(let data) = body else { return (body, resource.cacheKey, mimeType) }
        var playlist = data
        if route.kind == .masterPlaylist, try await isKept(resource.cacheKey, byDownload: true) {
            playlist = try await downloadedSelection(of: data, url: origin)
        }
        return (.bytes(try rewrite(playlist, route: route, address: address)), resource.cacheKey, mimeType)
    }

    /// Whether `key`'s entry is pinned: an asset a download keeps.
    private func isKept(_ key: HLSResourceKey, byDownload: Bool = false) async throws(HLSResourceError) -> Bool {
        do {
            guard let info = try await resources.info(key), info.isPinned else { return false }
            // A master an HLS download kept (last, after its media playlists) names its keepers;
            // one pinned otherwise (a DownloadQueue's pin of a running download's entries) does not.
            return !byDownload || !HLSEntryMetadata.keepers(of: info.metadata.userInfo).isEmpty
        } catch {
            throw .streaming(error)
        }
    }

    /// A downloaded master playlist is served as its downloaded selection
    /// (the variants and renditions whose media playlists are kept), like
    /// the offline asset of an `AVAssetDownloadTask`: a player never asks
    /// for a playlist the download did not keep (no origin request offline).
    private func downloadedSelection(of data: Data, url: URL) async throws(HLSResourceError) -> Data {
        let limits = resources.limits.playlist
        guard case .master(let master) = try? PlaylistParser.parse(data, url: url, limits: limits) else {
            return data
        }
        let urls = master.variants.map(\.url) + master.renditions.compactMap(\.url) + master.iFramePlaylistURLs
        var kept: Set<String> = []
        for playlistURL in urls {
            if try await isKept(resources.resourceKey(for: playlistURL)) { kept.insert(playlistURL.absoluteString) }
        }
        do {
            return try MasterPlaylistFilter.filter(data, url: url, limits: limits) { kept.contains($0.absoluteString) }
        } catch {
            throw .playlist(url: url, error)
        }
    }

    /// The URIs of a playlist the server fetches: its own origin's, and those the allowlist allows.
    var playlistURIRule: PlaylistURIRule {
        let allowlist = permissions.allowlist
        return PlaylistURIRule { allowlist.allows($0) }
    }

    /// `data`, the playlist of `route`, with every URI made a local URL of
    /// `address` (minted only when ``playlistURIRule`` allows it; the last
    /// rewritings are kept, within ``MediaServerConfiguration/hlsRewriteCacheBytes``:
    /// a playlist of hundreds of segments is rewritten once, not at every start).
    func rewrite(_ data: Data, route: HLSRoute, address: LocalAddress) throws(HLSResourceError) -> Data {
        let path = route.path(secret: address.secret)
        if let kept = rewrites.output(for: path, input: data) {
            // Served again: its URIs are minted again (they may have been forgotten since).
            for origin in kept.minted { permissions.mint(origin) }
            return kept.output
        }
        let limits = resources.limits.playlist
        var renditionTypes: [String: Rendition.MediaType] = [:]
        let rule = playlistURIRule
        var refused: [(URL, String)] = []
        var minted: [URL] = []
        do {
            if route.kind == .masterPlaylist,
                case .master(let master) = try PlaylistParser.parse(data, url: route.origin, limits: limits)
            {
                for rendition in master.renditions {
                    if let url = rendition.url { renditionTypes[url.absoluteString] = rendition.type }
                }
            }
            let output = try PlaylistRewriter.rewrite(data, url: route.origin, byteRanges: .remove, limits: limits) {
                reference in
                var mediaType = route.mediaType
                if reference.tag == "EXT-X-MEDIA" { mediaType = renditionTypes[reference.url.absoluteString] }
                if reference.kind == .mediaPlaylist, reference.tag == nil { mediaType = nil }
                guard let scheme = reference.url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
                    return nil  // data:, skd:… stay as they are
                }
                // A URI the rule refuses gets a local URL all the same (the player
                // sees a 403 for it, not a request past the server), but is not minted.
                let refusal = rule.refusal(of: reference.url, in: route.origin)
                if let refusal {
                    refused.append((reference.url, refusal))
                } else {
                    minted.append(reference.url)
                    permissions.mint(reference.url)
                }
                return address.url(
                    for: HLSRoute(
                        origin: reference.url, kind: reference.kind, mediaType: mediaType,
                        byteRange: reference.byteRange))
            }
            for (uri, reason) in refused {
                activity.emit(.playlistURIRefused(playlist: route.origin, uri: uri, reason: reason))
            }
            rewrites.keep(output, for: path, input: data, minted: minted)
            return output
        } catch {
            throw .playlist(url: route.origin, error)
        }
    }
}
