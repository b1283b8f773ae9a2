import Foundation

/// Parses M3U8 playlists (RFC 8216): master playlists and media playlists,
/// with URIs resolved against the playlist's URL. Pure: no I/O.
///
/// Lines may end with LF or CRLF, the text may start with a UTF-8 byte
/// order mark, blank lines and comments are skipped and unknown tags are
/// ignored. Anything malformed gives a ``PlaylistError`` with the line it
/// was found on; no input makes it crash or loop. A playlist beyond its
/// ``PlaylistLimits`` (bytes, line length, segments, variants, renditions)
/// is refused with ``PlaylistError/Reason/tooLarge(_:limit:)``.
public struct PlaylistParser {
    /// Parses `data`, read from `url` (URIs in it are resolved against `url`),
    /// within `limits`.
    public static func parse(_ data: Data, url: URL, limits: PlaylistLimits = PlaylistLimits())
        throws(PlaylistError) -> Playlist
    {
        try checkSize(data.count, limits: limits)
        return try parse(bytes: [UInt8](data), url: url, limits: limits)
    }

    /// Parses `text`, read from `url` (URIs in it are resolved against `url`),
    /// within `limits`.
    public static func parse(_ text: String, url: URL, limits: PlaylistLimits = PlaylistLimits())
        throws(PlaylistError) -> Playlist
    {
        try checkSize(text.utf8.count, limits: limits)
        return try parse(bytes: Array(text.utf8), url: url, limits: limits)
    }

    package static func parse(bytes: [UInt8], url: URL, limits: PlaylistLimits = PlaylistLimits())
        throws(PlaylistError) -> Playlist
    {
        try checkSize(bytes.count, limits: limits)
        var parser = PlaylistParser(url: url, limits: limits)
        let lines = PlaylistLine.split(bytes)
        guard !lines.isEmpty else { throw PlaylistError(line: 0, reason: .missingHeader) }
        for line in lines {
            guard line.content.count <= limits.maxLineBytes else {
                throw PlaylistError(line: line.number, reason: .tooLarge(.lineBytes, limit: limits.maxLineBytes))
            }
            try parser.consume(try text(of: line, in: bytes), line: line.number)
        }
        return try parser.finish()
    }

    /// Throws when a playlist of `count` bytes is over `limits`.
    static func checkSize(_ count: Int, limits: PlaylistLimits) throws(PlaylistError) {
        guard count <= limits.maxBytes else {
            throw PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: limits.maxBytes))
        }
    }

    /// The line's text, without a leading byte order mark (line 1 only)
    /// and without spaces and tabs around it.
    static func text(of line: PlaylistLine, in bytes: [UInt8]) throws(PlaylistError) -> String {
        var content = bytes[line.content]
        if line.number == 1, content.starts(with: PlaylistLine.byteOrderMark) { content = content.dropFirst(3) }
        guard PlaylistLine.isValidUTF8(content) else {
            throw PlaylistError(line: line.number, reason: .invalidEncoding)
        }
        func isBlank(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
        }
        while let first = content.first, isBlank(first) { content = content.dropFirst() }
        while let last = content.last, isBlank(last) { content = content.dropLast() }
        return String(decoding: content, as: UTF8.self)
    }

    // MARK: State

    private enum Kind { case master, media }

    private struct PendingSegment {
        let duration: Double
        let title: String
        let line: Int
    }

    private struct PendingVariant {
        let attributes: AttributeList
        let line: Int
    }

    private struct SegmentDraft {
        let url: URL
        let duration: Double
        let title: String
        let byteRange: ByteRange?
        let isDiscontinuity: Bool
        let keys: [PlaylistKey]
        let map: InitializationMap?
        let startTime: Double
    }

    private let url: URL
    private let limits: PlaylistLimits
    private var kind: Kind?
    private var seenTags: Set<String> = []
    private var version: Int?
    private var hasIndependentSegments = false
    // Media playlist
    private var targetDuration: Int?
    private var mediaSequence = 0
    private var discontinuitySequence = 0
    private var playlistType: MediaPlaylist.PlaylistType?
    private var hasEndList = false
    private var isIFramesOnly = false
    private var pendingSegment: PendingSegment?
    private var pendingByteRange: (length: Int, offset: Int?, line: Int)?
    private var pendingDiscontinuity = false
    private var keys: [PlaylistKey] = []
    private var map: InitializationMap?
    private var segments: [SegmentDraft] = []
    private var elapsed: Double = 0
    // Master playlist
    private var pendingVariant: PendingVariant?
    private var variants: [(variant: VariantStream, line: Int)] = []
    private var renditions: [Rendition] = []
    private var sessionKeys: [PlaylistKey] = []
    private var iFramePlaylistURLs: [URL] = []

    private init(url: URL, limits: PlaylistLimits) {
        self.url = url
        self.limits = limits
    }

    /// Throws when `count` things of `limit` are over it.
    private func check(_ count: Int, _ limit: PlaylistLimits.Limit, line: Int) throws(PlaylistError) {
        let value = limits.value(of: limit)
        guard count <= value else { throw PlaylistError(line: line, reason: .tooLarge(limit, limit: value)) }
    }

    // MARK: Lines

    private mutating func consume(_ text: String, line: Int) throws(PlaylistError) {
        if line == 1 {
            guard text == "#EXTM3U" else { throw PlaylistError(line: 1, reason: .missingHeader) }
            return
        }
        guard !text.isEmpty else { return }
        guard text.hasPrefix("#") else { return try uri(text, line: line) }
        guard text.hasPrefix("#EXT") else { return }  // a comment
        let body = text.dropFirst()
        if let colon = body.firstIndex(of: ":") {
            try tag(String(body[..<colon]), value: body[body.index(after: colon)...], line: line)
        } else {
            try tag(String(body), value: "", line: line)
        }
    }

    private mutating func mark(_ kind: Kind, line: Int) throws(PlaylistError) {
        if let current = self.kind, current != kind { throw PlaylistError(line: line, reason: .mixedPlaylist) }
        self.kind = kind
    }

    /// Notes a tag that may appear once.
    private mutating func once(_ name: String, line: Int) throws(PlaylistError) {
        guard seenTags.insert(name).inserted else { throw PlaylistError(line: line, reason: .duplicateTag(name)) }
    }

    private func integer(_ name: String, _ value: Substring, line: Int) throws(PlaylistError) -> Int {
        guard let integer = ByteRange.decimalInteger(value) else {
            throw PlaylistError(line: line, reason: .invalidValue(tag: name, value: String(value)))
        }
        return integer
    }

    private mutating func tag(_ name: String, value: Substring, line: Int) throws(PlaylistError) {
        switch name {
        case "EXT-X-VERSION":
            try once(name, line: line)
            version = try integer(name, value, line: line)
        case "EXT-X-INDEPENDENT-SEGMENTS":
            hasIndependentSegments = true
        case "EXTINF":
            try mark(.media, line: line)
            guard pendingSegment == nil else { throw PlaylistError(line: line, reason: .missingURI(tag: name)) }
            let parts = value.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
            let durationText = parts[0].trimmingCharacters(in: .whitespaces)
            guard let duration = Self.decimalFloat(Substring(durationText)) else {
                throw PlaylistError(line: line, reason: .invalidValue(tag: name, value: String(value)))
            }
            let title = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            pendingSegment = PendingSegment(duration: duration, title: title, line: line)
        case "EXT-X-BYTERANGE":
            try mark(.media, line: line)
            guard pendingByteRange == nil else { throw PlaylistError(line: line, reason: .missingURI(tag: name)) }
            guard let parsed = ByteRange.parse(value), parsed.length >= 1 else {
                throw PlaylistError(line: line, reason: .invalidValue(tag: name, value: String(value)))
            }
            pendingByteRange = (parsed.length, parsed.offset, line)
        case "EXT-X-TARGETDURATION":
            try mark(.media, line: line)
            try once(name, line: line)
            targetDuration = try integer(name, value, line: line)
        case "EXT-X-MEDIA-SEQUENCE":
            try mark(.media, line: line)
            try once(name, line: line)
            mediaSequence = try integer(name, value, line: line)
        case "EXT-X-DISCONTINUITY-SEQUENCE":
            try mark(.media, line: line)
            try once(name, line: line)
            discontinuitySequence = try integer(name, value, line: line)
        case "EXT-X-PLAYLIST-TYPE":
            try mark(.media, line: line)
            try once(name, line: line)
            guard let type = MediaPlaylist.PlaylistType(rawValue: String(value)) else {
                throw PlaylistError(line: line, reason: .invalidValue(tag: name, value: String(value)))
            }
            playlistType = type
        case "EXT-X-ENDLIST":
            try mark(.media, line: line)
            hasEndList = true
        case "EXT-X-DISCONTINUITY":
            try mark(.media, line: line)
            pendingDiscontinuity = true
        case "EXT-X-I-FRAMES-ONLY":
            try mark(.media, line: line)
            isIFramesOnly = true
        case "EXT-X-KEY":
            try mark(.media, line: line)
            let key = try Self.key(AttributeList(value, tag: name, line: line), base: url)
            if key.method == .none {
                keys.removeAll()
            } else {
                keys.removeAll { $0.keyFormat == key.keyFormat }
                keys.append(key)
            }
        case "EXT-X-MAP":
            try mark(.media, line: line)
            map = try Self.map(AttributeList(value, tag: name, line: line), base: url)
        case "EXT-X-STREAM-INF":
            try mark(.master, line: line)
            guard pendingVariant == nil else { throw PlaylistError(line: line, reason: .missingURI(tag: name)) }
            let attributes = try AttributeList(value, tag: name, line: line)
            // Check the attributes now, so an error points at this line.
            _ = try Self.variant(attributes, url: url)
            try check(variants.count + iFramePlaylistURLs.count + 1, .variants, line: line)
            pendingVariant = PendingVariant(attributes: attributes, line: line)
        case "EXT-X-I-FRAME-STREAM-INF":
            try mark(.master, line: line)
            let attributes = try AttributeList(value, tag: name, line: line)
            guard try attributes.decimalInteger("BANDWIDTH") != nil else { throw attributes.missing("BANDWIDTH") }
            try check(variants.count + iFramePlaylistURLs.count + 1, .variants, line: line)
            iFramePlaylistURLs.append(try Self.resolve(attributes.requiredQuotedString("URI"), base: url, line: line))
        case "EXT-X-MEDIA":
            try mark(.master, line: line)
            try check(renditions.count + 1, .renditions, line: line)
            renditions.append(try Self.rendition(AttributeList(value, tag: name, line: line), base: url))
        case "EXT-X-SESSION-KEY":
            try mark(.master, line: line)
            let attributes = try AttributeList(value, tag: name, line: line)
            let key = try Self.key(attributes, base: url)
            guard key.method != .none else { throw attributes.invalid("METHOD", "NONE") }
            sessionKeys.append(key)
        case "EXT-X-SESSION-DATA":
            try mark(.master, line: line)
        default:
            break  // unknown tags are ignored (RFC 8216 section 6.3.1)
        }
    }

    private mutating func uri(_ text: String, line: Int) throws(PlaylistError) {
        let resolved = try Self.resolve(text, base: url, line: line)
        if let pending = pendingVariant {
            variants.append((try Self.variant(pending.attributes, url: resolved), pending.line))
            pendingVariant = nil
            return
        }
        guard let pending = pendingSegment else { throw PlaylistError(line: line, reason: .unexpectedURI) }
        try check(segments.count + 1, .segments, line: line)
        var byteRange: ByteRange?
        if let spec = pendingByteRange {
            let offset: Int
            if let given = spec.offset {
                offset = given
            } else {
                guard let previous = segments.last, previous.url == resolved, let range = previous.byteRange else {
                    throw PlaylistError(line: spec.line, reason: .byteRangeWithoutPrevious)
                }
                offset = range.end
            }
            guard let range = ByteRange(offset: offset, length: spec.length) else {
                throw PlaylistError(line: spec.line, reason: .byteRangeOverflow)
            }
            byteRange = range
        }
        segments.append(
            SegmentDraft(
                url: resolved, duration: pending.duration, title: pending.title, byteRange: byteRange,
                isDiscontinuity: pendingDiscontinuity, keys: keys, map: map, startTime: elapsed))
        elapsed += pending.duration
        pendingSegment = nil
        pendingByteRange = nil
        pendingDiscontinuity = false
    }

    // MARK: End

    private func finish() throws(PlaylistError) -> Playlist {
        if let pending = pendingVariant {
            throw PlaylistError(line: pending.line, reason: .missingURI(tag: "EXT-X-STREAM-INF"))
        }
        if let pending = pendingSegment { throw PlaylistError(line: pending.line, reason: .missingURI(tag: "EXTINF")) }
        if let pending = pendingByteRange {
            throw PlaylistError(line: pending.line, reason: .missingURI(tag: "EXT-X-BYTERANGE"))
        }
        if kind == .master { return .master(try finishMaster()) }
        return .media(try finishMedia())
    }

    private func finishMaster() throws(PlaylistError) -> MasterPlaylist {
        for (variant, line) in variants {
            let groups: [(Rendition.MediaType, String?)] = [
                (.audio, variant.audioGroup), (.video, variant.videoGroup), (.subtitles, variant.subtitlesGroup),
                (.closedCaptions, variant.closedCaptionsGroup),
            ]
            for case (let type, let group?) in groups
            where !renditions.contains(where: { $0.type == type && $0.groupID == group }) {
                throw PlaylistError(line: line, reason: .unknownGroup(type: type.rawValue, groupID: group))
            }
        }
        return MasterPlaylist(
            url: url, version: version, variants: variants.map(\.variant), renditions: renditions,
            sessionKeys: sessionKeys, iFramePlaylistURLs: iFramePlaylistURLs,
            hasIndependentSegments: hasIndependentSegments)
    }

    private func finishMedia() throws(PlaylistError) -> MediaPlaylist {
        guard let targetDuration else { throw PlaylistError(line: 0, reason: .missingTargetDuration) }
        guard mediaSequence <= Int.max - segments.count,
            discontinuitySequence <= Int.max - segments.count
        else {
            throw PlaylistError(line: 0, reason: .invalidValue(tag: "EXT-X-MEDIA-SEQUENCE", value: "\(mediaSequence)"))
        }
        var discontinuities = discontinuitySequence
        var built: [MediaSegment] = []
        built.reserveCapacity(segments.count)
        for (index, draft) in segments.enumerated() {
            if draft.isDiscontinuity { discontinuities += 1 }
            built.append(
                MediaSegment(
                    url: draft.url, duration: draft.duration, title: draft.title, byteRange: draft.byteRange,
                    sequenceNumber: mediaSequence + index, discontinuitySequence: discontinuities,
                    isDiscontinuity: draft.isDiscontinuity, keys: draft.keys, map: draft.map,
                    startTime: draft.startTime))
        }
        return MediaPlaylist(
            url: url, version: version, targetDuration: targetDuration, mediaSequence: mediaSequence,
            discontinuitySequence: discontinuitySequence, playlistType: playlistType, hasEndList: hasEndList,
            isIFramesOnly: isIFramesOnly, hasIndependentSegments: hasIndependentSegments, segments: built)
    }
}
