import Foundation

/// The attribute-list tags, each parsed on its own so the rewriter can
/// read the same values the parser does.
extension PlaylistParser {
    /// `uri` resolved against `base` (which should be absolute). A URI with
    /// characters a URL may not hold (spaces, non-ASCII) is percent-encoded
    /// first. A result without a scheme (such as from `://`) is refused.
    static func resolve(_ uri: String, base: URL, line: Int) throws(PlaylistError) -> URL {
        if !uri.isEmpty, let url = URL(string: uri, relativeTo: base)?.absoluteURL, url.scheme?.isEmpty == false {
            return url
        }
        if !uri.isEmpty, let encoded = uri.addingPercentEncoding(withAllowedCharacters: uriCharacters),
            let url = URL(string: encoded, relativeTo: base)?.absoluteURL, url.scheme?.isEmpty == false
        {
            return url
        }
        throw PlaylistError(line: line, reason: .invalidURI(uri))
    }

    /// The characters a URI keeps as they are when it is percent-encoded:
    /// the unreserved and reserved ones, and `%` for escapes already there.
    private static let uriCharacters = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%")

    /// A decimal-floating-point value: digits with at most one `.`, finite.
    static func decimalFloat(_ text: Substring) -> Double? {
        var digits = 0
        var dots = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): dots += 1
            default: return nil
            }
        }
        guard digits > 0, dots <= 1, let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `EXT-X-KEY` or `EXT-X-SESSION-KEY`.
    static func key(_ attributes: AttributeList, base: URL) throws(PlaylistError) -> PlaylistKey {
        guard let methodName = try attributes.enumeratedString("METHOD") else { throw attributes.missing("METHOD") }
        guard let method = PlaylistKey.Method(rawValue: String(methodName)) else {
            throw PlaylistError(line: attributes.line, reason: .unknownKeyMethod(String(methodName)))
        }
        guard method != .none else { return PlaylistKey(method: .none, url: nil) }
        let url = try resolve(attributes.requiredQuotedString("URI"), base: base, line: attributes.line)
        let iv = try attributes.hexadecimalSequence("IV", bytes: 16)
        let format = try attributes.quotedString("KEYFORMAT") ?? PlaylistKey.identityKeyFormat
        var versions = [1]
        if let text = try attributes.quotedString("KEYFORMATVERSIONS") {
            versions = []
            for part in text.split(separator: "/", omittingEmptySubsequences: false) {
                guard let version = ByteRange.decimalInteger(part) else {
                    throw attributes.invalid("KEYFORMATVERSIONS", Substring(text))
                }
                versions.append(version)
            }
        }
        return PlaylistKey(
            method: method, url: url, initializationVector: iv, keyFormat: format, keyFormatVersions: versions)
    }

    /// `EXT-X-MAP`. Its `BYTERANGE` must carry an offset (RFC 8216bis
    /// section 4.4.4.5): there is no previous range to follow.
    static func map(_ attributes: AttributeList, base: URL) throws(PlaylistError) -> InitializationMap {
        let url = try resolve(attributes.requiredQuotedString("URI"), base: base, line: attributes.line)
        guard let text = try attributes.quotedString("BYTERANGE") else { return InitializationMap(url: url) }
        guard let parsed = ByteRange.parse(Substring(text)), let offset = parsed.offset, parsed.length >= 1 else {
            throw attributes.invalid("BYTERANGE", Substring(text))
        }
        guard let range = ByteRange(offset: offset, length: parsed.length) else {
            throw PlaylistError(line: attributes.line, reason: .byteRangeOverflow)
        }
        return InitializationMap(url: url, byteRange: range)
    }

    /// `EXT-X-STREAM-INF`, for the URI line after it.
    static func variant(_ attributes: AttributeList, url: URL) throws(PlaylistError) -> VariantStream {
        guard let bandwidth = try attributes.decimalInteger("BANDWIDTH") else { throw attributes.missing("BANDWIDTH") }
        var closedCaptions: String?
        if let attribute = attributes["CLOSED-CAPTIONS"] {
            if attribute.isQuoted {
                closedCaptions = String(attribute.value)
            } else if attribute.value != "NONE" {
                throw attributes.invalid("CLOSED-CAPTIONS", attribute.value)
            }
        }
        return VariantStream(
            url: url, bandwidth: bandwidth, averageBandwidth: try attributes.decimalInteger("AVERAGE-BANDWIDTH"),
            codecs: list(try attributes.quotedString("CODECS")), resolution: try attributes.resolution("RESOLUTION"),
            frameRate: try attributes.decimalFloat("FRAME-RATE"), audioGroup: try attributes.quotedString("AUDIO"),
            videoGroup: try attributes.quotedString("VIDEO"), subtitlesGroup: try attributes.quotedString("SUBTITLES"),
            closedCaptionsGroup: closedCaptions)
    }

    /// `EXT-X-MEDIA`.
    static func rendition(_ attributes: AttributeList, base: URL) throws(PlaylistError) -> Rendition {
        guard let typeName = try attributes.enumeratedString("TYPE") else { throw attributes.missing("TYPE") }
        guard let type = Rendition.MediaType(rawValue: String(typeName)) else {
            throw attributes.invalid("TYPE", typeName)
        }
        let uri = try attributes.quotedString("URI")
        if type == .subtitles, uri == nil { throw attributes.missing("URI") }
        if type == .closedCaptions, let uri { throw attributes.invalid("URI", Substring(uri)) }
        return Rendition(
            type: type, groupID: try attributes.requiredQuotedString("GROUP-ID"),
            name: try attributes.requiredQuotedString("NAME"), language: try attributes.quotedString("LANGUAGE"),
            associatedLanguage: try attributes.quotedString("ASSOC-LANGUAGE"),
            isDefault: try attributes.yesNo("DEFAULT") ?? false,
            autoselect: try attributes.yesNo("AUTOSELECT") ?? false,
            isForced: try attributes.yesNo("FORCED") ?? false,
            url: try uri.map { (uri) throws(PlaylistError) in try resolve(uri, base: base, line: attributes.line) },
            instreamID: try attributes.quotedString("INSTREAM-ID"),
            characteristics: list(try attributes.quotedString("CHARACTERISTICS")),
            channels: try attributes.quotedString("CHANNELS"))
    }

    /// A comma-separated list inside a quoted string, trimmed, empty items dropped.
    private static func list(_ text: String?) -> [String] {
        guard let text else { return [] }
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
