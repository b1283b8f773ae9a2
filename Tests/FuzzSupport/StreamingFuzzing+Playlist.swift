import Foundation
import HLSPlaylist
import MediaStreaming

/// The entry point of the libFuzzer target `FuzzPlaylist`: the M3U8
/// parser, and for what it accepts, the selector, the planner and the
/// rewriter, with the properties they must keep.
extension StreamingFuzzing {
    static let playlistURL = URL(string: "https://origin.example.com/a/b/index.m3u8?token=1")!

    /// Parses `bytes` as a playlist. What parses must be consistent
    /// (segment numbering, byte ranges, times), must plan or be refused
    /// with a typed error, and must survive rewriting: with every URI left
    /// to the origin it parses back to the same playlist; with every URI
    /// made local it parses back with every URL local; with byte ranges
    /// removed it parses back without any. Returns whether it parsed.
    /// Within tight limits too, a playlist parses as it does without them,
    /// or is refused as too large (the limit named with its value), or with
    /// the error it has without them.
    @discardableResult
    public static func parsePlaylist(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let playlist: Playlist
        do {
            playlist = try PlaylistParser.parse(Data(bytes), url: playlistURL)
        } catch {
            let lines = PlaylistLine.split(bytes).count
            try fuzzCheck(error.line >= 0 && error.line <= lines, "error line \(error.line) outside 0...\(lines)")
            _ = error.description
            try checkLimits(bytes, .failure(error))
            return false
        }
        try checkLimits(bytes, .success(playlist))
        switch playlist {
        case .media(let media): try checkMedia(media)
        case .master(let master):
            try checkMaster(master)
            try checkFilter(bytes, master)
        }
        try checkRewrites(bytes, playlist)
        return true
    }

    /// Limits a fuzzed input can reach (corpus seeds go just past each).
    static let tightLimits = PlaylistLimits(
        maxBytes: 4096, maxLineBytes: 200, maxSegments: 8, maxVariants: 4, maxRenditions: 4)

    static func checkLimits(_ bytes: [UInt8], _ unlimited: Result<Playlist, PlaylistError>) throws(FuzzFailure) {
        let limited: Result<Playlist, PlaylistError>
        do {
            limited = .success(try PlaylistParser.parse(Data(bytes), url: playlistURL, limits: tightLimits))
        } catch {
            limited = .failure(error)
        }
        switch limited {
        case .failure(let error):
            if case .tooLarge(let limit, let value) = error.reason {
                try fuzzCheck(value == tightLimits.value(of: limit), "\(limit) refused at \(value)")
            } else {
                try fuzzCheck(unlimited == .failure(error), "within limits: \(error); without: \(unlimited)")
            }
        case .success(let playlist):
            try fuzzCheck(unlimited == .success(playlist), "within limits it parsed otherwise")
        }
    }

    static func checkMedia(_ media: MediaPlaylist) throws(FuzzFailure) {
        var time = 0.0
        for (index, segment) in media.segments.enumerated() {
            try fuzzCheck(segment.sequenceNumber == media.mediaSequence + index, "segment numbering")
            try fuzzCheck(segment.duration >= 0 && segment.duration.isFinite, "segment duration")
            try fuzzCheck(segment.startTime == time, "segment start time")
            time += segment.duration
            if let range = segment.byteRange { try fuzzCheck(range.length >= 1 && range.offset >= 0, "byte range") }
            try fuzzCheck(Set(segment.keys.map(\.keyFormat)).count == segment.keys.count, "two keys of one format")
            try fuzzCheck(!segment.keys.contains { $0.method == .none || $0.url == nil }, "a NONE key in force")
            if let iv = segment.keys.first?.initializationVector { try fuzzCheck(iv.count == 16, "IV length") }
        }
        let planned = Result { () throws(HLSPlanError) in
            try HLSDownloadPlanner.plan(media: media, cacheKey: .droppingQueryItems(["token"]))
        }
        switch planned {
        case .success(let plan):
            try fuzzCheck(plan.cacheKeys.count == plan.resources.count, "a resource planned twice")
            try fuzzCheck(plan.resources.first?.kind == .mediaPlaylist, "the playlist comes first")
            let segments = Set(
                media.segments.map { HLSResourceKey(key: $0.url.absoluteString, byteRange: $0.byteRange) })
            try fuzzCheck(plan.resources(of: .segment).count <= segments.count, "more segments planned than listed")
        case .failure(.liveContent): try fuzzCheck(!media.hasEndList, "a finished playlist refused as live")
        case .failure(.unsupportedEncryption): try fuzzCheck(media.hasEndList, "live checked after keys")
        case .failure(.missingMediaPlaylist): throw FuzzFailure("a single media playlist needs no other")
        }
    }

    static func checkMaster(_ master: MasterPlaylist) throws(FuzzFailure) {
        for choice in [VariantChoice.first, .highestBandwidth(atMost: 1_000_000), .lowestBandwidth] {
            guard
                let selection = try? VariantSelector.select(
                    from: master, variant: choice, audio: .all, subtitles: .automatic)
            else { continue }
            try fuzzCheck(master.variants.contains(selection.variant), "a variant not in the playlist")
            try fuzzCheck(selection.audio.allSatisfy { $0.groupID == selection.variant.audioGroup }, "audio group")
            let urls = selection.mediaPlaylistURLs
            try fuzzCheck(Set(urls.map(\.absoluteString)).count == urls.count, "a media playlist listed twice")
            // Every playlist it needs, empty and finished: the plan lists each once.
            let empty = urls.map { MediaPlaylist(url: $0, targetDuration: 1, hasEndList: true, segments: []) }
            if let plan = try? HLSDownloadPlanner.plan(master: master, selection: selection, mediaPlaylists: empty) {
                try fuzzCheck(plan.resources(of: .mediaPlaylist).count <= urls.count, "media playlists")
                try fuzzCheck(plan.cacheKeys.count == plan.resources.count, "a resource planned twice")
            }
        }
    }

    /// The downloaded-selection filter: keeping every other media playlist
    /// URL, the result parses back (a master) with only available variants
    /// (less those whose audio group lost every rendition, while another
    /// keeps its audio) and renditions, or, with no variant left, is unchanged.
    static func checkFilter(_ bytes: [UInt8], _ master: MasterPlaylist) throws(FuzzFailure) {
        let urls = master.variants.map(\.url) + master.renditions.compactMap(\.url) + master.iFramePlaylistURLs
        let available = Set(urls.enumerated().filter { $0.offset % 2 == 0 }.map(\.element.absoluteString))
        let isAvailable: (URL) -> Bool = { available.contains($0.absoluteString) }
        let filtered: Data
        do {
            filtered = try MasterPlaylistFilter.filter(Data(bytes), url: playlistURL, isAvailable: isAvailable)
        } catch {
            throw FuzzFailure("the filter refused a master the parser accepted: \(error)")
        }
        guard master.variants.contains(where: { isAvailable($0.url) }) else {
            try fuzzCheck(filtered == Data(bytes), "changed although no variant is available")
            return
        }
        guard case .master(let result) = try? PlaylistParser.parse(filtered, url: playlistURL) else {
            throw FuzzFailure("the filtered master does not parse")
        }
        try fuzzCheck(result.variants.allSatisfy { isAvailable($0.url) }, "an unavailable variant kept")
        // A variant whose AUDIO group lost every rendition goes, while
        // another available variant keeps its audio (else it plays silent).
        let audio = master.renditions.filter { $0.type == .audio }
        let lostAudio = Set(audio.map(\.groupID)).subtracting(
            audio.filter { $0.url.map(isAvailable) ?? true }.map(\.groupID))
        let keepsAudio: (VariantStream) -> Bool = { $0.audioGroup.map { !lostAudio.contains($0) } ?? true }
        let kept = master.variants.filter { isAvailable($0.url) }
        let dropSilent = kept.contains(where: keepsAudio)
        let expected = kept.filter { !dropSilent || keepsAudio($0) }
        try fuzzCheck(result.variants.count == expected.count, "a variant lost, or one offered without its audio")
        try fuzzCheck(result.renditions.allSatisfy { $0.url.map(isAvailable) ?? true }, "an unavailable rendition kept")
    }

    static func checkRewrites(_ bytes: [UInt8], _ playlist: Playlist) throws(FuzzFailure) {
        let local = URL(string: "http://127.0.0.1:9/local/playlist.m3u8")!
        do {
            let origin = try PlaylistRewriter.rewrite(bytes: bytes, url: playlistURL, byteRanges: .keep) { _ in nil }
            let reparsed = try PlaylistParser.parse(bytes: origin, url: local)
            try fuzzCheck(reparsed.master?.variants == playlist.master?.variants, "variants changed by rewriting")
            try fuzzCheck(reparsed.master?.renditions == playlist.master?.renditions, "renditions changed")
            try fuzzCheck(reparsed.media?.segments == playlist.media?.segments, "segments changed by rewriting")

            var references = 0
            let localized = try PlaylistRewriter.rewrite(bytes: bytes, url: playlistURL, byteRanges: .keep) { _ in
                references += 1
                return URL(string: "http://127.0.0.1:9/r/\(references)")
            }
            let rewritten = try PlaylistParser.parse(bytes: localized, url: local)
            var urls: [URL] = []
            if let master = rewritten.master {
                urls =
                    master.variants.map(\.url) + master.renditions.compactMap(\.url)
                    + master.sessionKeys.compactMap(\.url) + master.iFramePlaylistURLs
            } else if let media = rewritten.media {
                urls =
                    media.segments.map(\.url) + media.segments.compactMap(\.map?.url)
                    + media.segments.flatMap(\.keys).compactMap(\.url)
                try fuzzCheck(
                    media.segments.map(\.byteRange) == playlist.media?.segments.map(\.byteRange), "byte ranges changed")
            }
            try fuzzCheck(urls.allSatisfy { $0.host == "127.0.0.1" }, "a URI left unrewritten")

            let unranged = try PlaylistRewriter.rewrite(bytes: bytes, url: playlistURL, byteRanges: .remove) {
                URL(string: "http://127.0.0.1:9/\($0.kind.rawValue)/\($0.byteRange?.description ?? "all")")
            }
            if let media = try PlaylistParser.parse(bytes: unranged, url: local).media {
                try fuzzCheck(
                    media.segments.allSatisfy { $0.byteRange == nil && $0.map?.byteRange == nil }, "a range left")
                try fuzzCheck(media.segments.count == playlist.media?.segments.count, "segments lost")
            }
        } catch {
            throw FuzzFailure("a parsed playlist failed after rewriting: \(error)")
        }
    }
}
