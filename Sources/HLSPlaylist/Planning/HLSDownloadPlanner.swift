import Foundation

/// Turns a chosen variant and renditions, and their parsed media
/// playlists, into the list of resources an offline download fetches
/// (``HLSDownloadPlan``). Pure: the playlists are fetched and parsed
/// before, by the caller.
///
/// Refuses live playlists (no `EXT-X-ENDLIST`) and keys offline playback
/// cannot use (SAMPLE-AES, FairPlay `skd://`, non-`identity` formats). Each
/// resource is keyed by `cacheKey` of its URL (by default the URL's
/// absolute string) and its byte range; a resource met twice (a key shared
/// by every segment, an init segment shared by renditions) is listed once.
/// MediaStreaming adds the same two functions taking its `CacheKeyPolicy`.
public enum HLSDownloadPlanner {
    /// The plan for `selection` of `master`. `mediaPlaylists` must hold the
    /// parsed playlist of every URL in `selection.mediaPlaylistURLs` (more
    /// are ignored).
    public static func plan(
        master: MasterPlaylist, selection: HLSSelection, mediaPlaylists: [MediaPlaylist],
        cacheKey: (URL) -> String = { $0.absoluteString }
    ) throws(HLSPlanError) -> HLSDownloadPlan {
        var byURL: [String: MediaPlaylist] = [:]
        for playlist in mediaPlaylists { byURL[playlist.url.absoluteString] = playlist }
        var tracks: [(MediaPlaylist, Rendition.MediaType?)] = []
        let wanted: [(URL, Rendition.MediaType?)] =
            [(selection.variant.url, nil)] + selection.audio.compactMap { $0.url.map { ($0, .audio) } }
            + selection.subtitles.compactMap { $0.url.map { ($0, .subtitles) } }
        for (url, type) in wanted where !tracks.contains(where: { $0.0.url.absoluteString == url.absoluteString }) {
            guard let playlist = byURL[url.absoluteString] else { throw .missingMediaPlaylist(url) }
            tracks.append((playlist, type))
        }
        var head = [resource(.masterPlaylist, master.url, playlist: nil, cacheKey: cacheKey)]
        for key in master.sessionKeys {
            try check(key, playlistURL: master.url)
            if let url = key.url { head.append(resource(.key, url, playlist: nil, cacheKey: cacheKey)) }
        }
        return try plan(head: head, tracks: tracks, cacheKey: cacheKey)
    }

    /// The plan for an asset that is a single media playlist.
    public static func plan(media: MediaPlaylist, cacheKey: (URL) -> String = { $0.absoluteString })
        throws(HLSPlanError)
        -> HLSDownloadPlan
    {
        try plan(head: [], tracks: [(media, nil)], cacheKey: cacheKey)
    }

    private static func plan(
        head: [HLSResource], tracks: [(MediaPlaylist, Rendition.MediaType?)], cacheKey: (URL) -> String
    ) throws(HLSPlanError) -> HLSDownloadPlan {
        var resources = head
        for (playlist, type) in tracks {
            guard playlist.hasEndList else { throw .liveContent(playlistURL: playlist.url) }
            for segment in playlist.segments {
                for key in segment.keys { try check(key, playlistURL: playlist.url) }
            }
            resources.append(resource(.mediaPlaylist, playlist.url, playlist: playlist, type: type, cacheKey: cacheKey))
        }
        // Each track's keys, init segments and segments, in its own order,
        // then merged by start time (ties: the earlier track first).
        var timed: [(time: Double, track: Int, index: Int, resource: HLSResource)] = []
        for (track, (playlist, type)) in tracks.enumerated() {
            var index = 0
            func add(_ resource: HLSResource, at time: Double) {
                timed.append((time, track, index, resource))
                index += 1
            }
            for segment in playlist.segments {
                for key in segment.keys {
                    guard let url = key.url else { continue }
                    add(resource(.key, url, playlist: playlist, type: type, cacheKey: cacheKey), at: segment.startTime)
                }
                if let map = segment.map {
                    add(
                        resource(
                            .initializationSegment, map.url, range: map.byteRange, playlist: playlist, type: type,
                            cacheKey: cacheKey), at: segment.startTime)
                }
                add(
                    HLSResource(
                        kind: .segment, url: segment.url, byteRange: segment.byteRange,
                        cacheKey: HLSResourceKey(key: cacheKey(segment.url), byteRange: segment.byteRange),
                        playlistURL: playlist.url, mediaType: type, duration: segment.duration,
                        startTime: segment.startTime), at: segment.startTime)
            }
        }
        timed.sort { ($0.time, $0.track, $0.index) < ($1.time, $1.track, $1.index) }
        resources += timed.map(\.resource)
        var seen: Set<HLSResourceKey> = []
        let unique = resources.filter { seen.insert($0.cacheKey).inserted }
        let summaries = tracks.map { playlist, type in
            HLSDownloadPlan.Track(
                playlistURL: playlist.url, mediaType: type, segmentCount: playlist.segments.count,
                duration: playlist.duration)
        }
        return HLSDownloadPlan(resources: unique, tracks: summaries)
    }

    /// Refuses a key offline playback cannot use.
    static func check(_ key: PlaylistKey, playlistURL: URL) throws(HLSPlanError) {
        switch key.method {
        case .none: return
        case .aes128:
            if key.keyFormat == PlaylistKey.identityKeyFormat, key.url?.scheme?.lowercased() != "skd" { return }
        case .sampleAES, .sampleAESCTR: break
        }
        throw .unsupportedEncryption(
            method: key.method, keyFormat: key.keyFormat, keyURL: key.url, playlistURL: playlistURL)
    }

    private static func resource(
        _ kind: HLSResourceKind, _ url: URL, range: ByteRange? = nil, playlist: MediaPlaylist?,
        type: Rendition.MediaType? = nil, cacheKey: (URL) -> String
    ) -> HLSResource {
        HLSResource(
            kind: kind, url: url, byteRange: range,
            cacheKey: HLSResourceKey(key: cacheKey(url), byteRange: range), playlistURL: playlist?.url,
            mediaType: type)
    }
}
