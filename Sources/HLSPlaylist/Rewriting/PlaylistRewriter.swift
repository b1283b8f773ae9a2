import Foundation

/// Rewrites every URI of a playlist — segment and variant lines and the
/// `URI="…"` attribute of every tag (`EXT-X-KEY`, `EXT-X-MAP`,
/// `EXT-X-MEDIA`, `EXT-X-SESSION-KEY`, `EXT-X-I-FRAME-STREAM-INF`, and any
/// other tag with one) — to the URL a mapping gives, for a local server to
/// serve the playlist from its cache. Works on the text, line by line:
/// every other byte (tags it does not know, comments, blank lines, line
/// ends, a byte order mark) stays as it was. Pure.
///
/// KTVHTTPCache's rewriter only touched lines starting with `http`, so
/// absolute KEY and MAP URIs bypassed its cache; this one rewrites each URI
/// the parser resolves, relative or absolute, whatever its scheme.
public enum PlaylistRewriter {
    /// What the rewritten playlist says about byte ranges.
    public enum ByteRangeHandling: Sendable, Hashable {
        /// `EXT-X-BYTERANGE` tags and `EXT-X-MAP` `BYTERANGE` attributes
        /// stay: each local URL stands for the whole original resource and
        /// the server answers the player's Range requests into it. An
        /// `EXT-X-BYTERANGE` without an offset gets its offset written out
        /// (the one change besides URIs), so the playlist still means the
        /// same bytes if the mapping gives one URL several local URLs.
        case keep
        /// They are removed: each (URL, byte range) has its own local URL
        /// serving exactly those bytes.
        case remove
    }

    /// `text`, read from `url`, with each URI replaced by `localURL` of its
    /// reference; where `localURL` gives nil, by the absolute URL the URI
    /// resolves to (so it still reaches the origin from a playlist served
    /// elsewhere). Throws what parsing `text` within `limits` throws.
    public static func rewrite(
        _ text: String, url: URL, byteRanges: ByteRangeHandling, limits: PlaylistLimits = PlaylistLimits(),
        localURL: (PlaylistReference) -> URL?
    ) throws(PlaylistError) -> String {
        try PlaylistParser.checkSize(text.utf8.count, limits: limits)
        return String(
            decoding: try rewrite(
                bytes: Array(text.utf8), url: url, byteRanges: byteRanges, limits: limits, localURL: localURL),
            as: UTF8.self)
    }

    /// ``rewrite(_:url:byteRanges:limits:localURL:)-(String,_,_,_,_)`` for the playlist's bytes.
    public static func rewrite(
        _ data: Data, url: URL, byteRanges: ByteRangeHandling, limits: PlaylistLimits = PlaylistLimits(),
        localURL: (PlaylistReference) -> URL?
    ) throws(PlaylistError) -> Data {
        try PlaylistParser.checkSize(data.count, limits: limits)
        return Data(
            try rewrite(bytes: [UInt8](data), url: url, byteRanges: byteRanges, limits: limits, localURL: localURL))
    }

    package static func rewrite(
        bytes: [UInt8], url: URL, byteRanges: ByteRangeHandling, limits: PlaylistLimits = PlaylistLimits(),
        localURL: (PlaylistReference) -> URL?
    ) throws(PlaylistError) -> [UInt8] {
        let playlist = try PlaylistParser.parse(bytes: bytes, url: url, limits: limits)
        // A URI line is the next variant of a master playlist, or the next
        // segment of a media playlist (the parser accepted no other kind).
        var lineReferences: [(url: URL, byteRange: ByteRange?, kind: HLSResourceKind)]
        switch playlist {
        case .master(let master): lineReferences = master.variants.map { ($0.url, nil, .mediaPlaylist) }
        case .media(let media): lineReferences = media.segments.map { ($0.url, $0.byteRange, .segment) }
        }
        var nextLineReference = 0
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        for line in PlaylistLine.split(bytes) {
            let content = String(decoding: bytes[line.content], as: UTF8.self)
            let ending = bytes[line.content.upperBound..<line.whole.upperBound]
            let trimmed = trimmedRange(of: content)
            let text = content[trimmed]
            func emit(_ replacement: String) {
                output.append(contentsOf: content[..<trimmed.lowerBound].utf8)
                output.append(contentsOf: replacement.utf8)
                output.append(contentsOf: content[trimmed.upperBound...].utf8)
                output.append(contentsOf: ending)
            }
            if line.number == 1 || text.isEmpty || (text.hasPrefix("#") && !text.hasPrefix("#EXT")) {
                output.append(contentsOf: bytes[line.whole])
            } else if !text.hasPrefix("#") {
                guard nextLineReference < lineReferences.count else {
                    output.append(contentsOf: bytes[line.whole])  // not reached: the parser counted these lines
                    continue
                }
                let target = lineReferences[nextLineReference]
                nextLineReference += 1
                let reference = PlaylistReference(
                    url: target.url, byteRange: target.byteRange, kind: target.kind, line: line.number)
                emit((localURL(reference) ?? target.url).absoluteString)
            } else if text.hasPrefix("#EXT-X-BYTERANGE:") {
                guard byteRanges == .keep else { continue }
                // The range applies to the next URI line. An offset the
                // playlist left out is written out: with each URI mapped
                // on its own, "right after the previous range of the same
                // URI" may no longer hold.
                if !text.contains("@"), nextLineReference < lineReferences.count,
                    let range = lineReferences[nextLineReference].byteRange
                {
                    emit("#EXT-X-BYTERANGE:\(range.length)@\(range.offset)")
                } else {
                    output.append(contentsOf: bytes[line.whole])
                }
            } else if let replacement = rewriteTag(
                text, base: url, line: line.number, byteRanges: byteRanges, localURL: localURL)
            {
                emit(replacement)
            } else {
                output.append(contentsOf: bytes[line.whole])
            }
        }
        return output
    }

    /// The tag line `text` with its URI attribute rewritten; nil when it
    /// has none (or it is not an attribute list the parser can read).
    static func rewriteTag(
        _ text: Substring, base: URL, line: Int, byteRanges: ByteRangeHandling, localURL: (PlaylistReference) -> URL?
    ) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let tag = String(text[text.index(after: text.startIndex)..<colon])
        let value = text[text.index(after: colon)...]
        guard value.contains("URI="), let attributes = try? AttributeList(value, tag: tag, line: line),
            let uri = attributes["URI"], uri.isQuoted,
            let resolved = try? PlaylistParser.resolve(String(uri.value), base: base, line: line)
        else { return nil }
        var kind = HLSResourceKind.other
        var byteRange: ByteRange?
        switch tag {
        case "EXT-X-KEY", "EXT-X-SESSION-KEY": kind = .key
        case "EXT-X-MEDIA": kind = .mediaPlaylist
        case "EXT-X-I-FRAME-STREAM-INF": kind = .iFramePlaylist
        case "EXT-X-MAP":
            kind = .initializationSegment
            byteRange = (try? PlaylistParser.map(attributes, base: base))?.byteRange
        default: break
        }
        let reference = PlaylistReference(url: resolved, byteRange: byteRange, kind: kind, tag: tag, line: line)
        let replacement = (localURL(reference) ?? resolved).absoluteString
        if tag == "EXT-X-MAP", byteRanges == .remove, attributes["BYTERANGE"] != nil {
            let kept = attributes.attributes.filter { $0.name != "BYTERANGE" }.map { attribute in
                let value = attribute.name == "URI" ? Substring(replacement) : attribute.value
                return attribute.isQuoted ? "\(attribute.name)=\"\(value)\"" : "\(attribute.name)=\(value)"
            }
            return "#\(tag):" + kept.joined(separator: ",")
        }
        return String(text[..<uri.value.startIndex]) + replacement + String(text[uri.value.endIndex...])
    }

    /// The range of `content` without the spaces, tabs and carriage returns
    /// around it: the bytes the parser reads.
    static func trimmedRange(of content: String) -> Range<String.Index> {
        let utf8 = content.utf8
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
        let start = utf8.firstIndex { !blank($0) } ?? utf8.endIndex
        var end = utf8.endIndex
        while end > start, blank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        return start..<end
    }
}
