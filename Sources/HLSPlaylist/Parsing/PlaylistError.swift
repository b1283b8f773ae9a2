/// Why a playlist could not be parsed, and where: `line` is the 1-based
/// line of the playlist text the problem was found on (0 when the text as
/// a whole is at fault, such as an empty file).
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 1-based line number the problem was found on; 0 for the whole text.
    public let line: Int
    /// What is wrong.
    public let reason: Reason

    public init(line: Int, reason: Reason) {
        self.line = line
        self.reason = reason
    }

    /// What is wrong with a playlist.
    public enum Reason: Sendable, Equatable {
        /// The text does not start with `#EXTM3U` (after an optional BOM).
        case missingHeader
        /// The line is not valid UTF-8.
        case invalidEncoding
        /// The attribute list of `tag` cannot be split into `NAME=value`
        /// pairs (`detail` says where it went wrong).
        case malformedAttributeList(tag: String, detail: String)
        /// `tag` names `attribute` twice.
        case duplicateAttribute(tag: String, attribute: String)
        /// `tag` lacks an attribute it must have.
        case missingAttribute(tag: String, attribute: String)
        /// `attribute` of `tag` has a value of the wrong form.
        case invalidAttribute(tag: String, attribute: String, value: String)
        /// The value of `tag` (such as `EXTINF`'s duration) has the wrong form.
        case invalidValue(tag: String, value: String)
        /// A tag that may appear once appears again.
        case duplicateTag(String)
        /// A URI (a URI line or a `URI` attribute) cannot be made into a URL.
        case invalidURI(String)
        /// A URI line that no `EXTINF` (media playlist) or
        /// `EXT-X-STREAM-INF` (master playlist) precedes.
        case unexpectedURI
        /// A tag that applies to the next URI line (`EXTINF`,
        /// `EXT-X-STREAM-INF`, `EXT-X-BYTERANGE`) has none: the text ends,
        /// or another such tag comes first.
        case missingURI(tag: String)
        /// An `EXT-X-BYTERANGE` without an offset whose previous segment is
        /// not a sub-range of the same resource.
        case byteRangeWithoutPrevious
        /// A byte range reaching past the largest offset this platform can hold.
        case byteRangeOverflow
        /// The text has tags of both a master and a media playlist.
        case mixedPlaylist
        /// A media playlist without `EXT-X-TARGETDURATION`.
        case missingTargetDuration
        /// An `EXT-X-KEY` or `EXT-X-SESSION-KEY` METHOD this parser does not know.
        case unknownKeyMethod(String)
        /// A variant names an AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS
        /// group that no `EXT-X-MEDIA` of that type defines.
        case unknownGroup(type: String, groupID: String)
        /// The playlist goes beyond one of its ``PlaylistLimits`` (`limit` is its value).
        case tooLarge(PlaylistLimits.Limit, limit: Int)
    }

    public var description: String {
        let place = line > 0 ? "line \(line)" : "playlist"
        return "\(place): \(reason)"
    }
}

extension PlaylistError.Reason: CustomStringConvertible {
    public var description: String {
        switch self {
        case .missingHeader: "does not start with #EXTM3U"
        case .invalidEncoding: "not UTF-8"
        case .malformedAttributeList(let tag, let detail): "malformed attribute list of \(tag): \(detail)"
        case .duplicateAttribute(let tag, let attribute): "\(tag) has \(attribute) twice"
        case .missingAttribute(let tag, let attribute): "\(tag) lacks \(attribute)"
        case .invalidAttribute(let tag, let attribute, let value):
            "\(tag) has an invalid \(attribute): \(value.prefix(100))"
        case .invalidValue(let tag, let value): "invalid \(tag) value: \(value.prefix(100))"
        case .duplicateTag(let tag): "\(tag) appears more than once"
        case .invalidURI(let uri): "invalid URI: \(uri.prefix(200))"
        case .unexpectedURI: "a URI line that no #EXTINF or #EXT-X-STREAM-INF precedes"
        case .missingURI(let tag): "\(tag) is not followed by a URI line"
        case .byteRangeWithoutPrevious:
            "EXT-X-BYTERANGE without an offset does not follow a sub-range of the same resource"
        case .byteRangeOverflow: "a byte range past the largest offset"
        case .mixedPlaylist: "has tags of both a master and a media playlist"
        case .missingTargetDuration: "a media playlist without #EXT-X-TARGETDURATION"
        case .unknownKeyMethod(let method): "unknown key METHOD \(method.prefix(100))"
        case .unknownGroup(let type, let groupID):
            "no EXT-X-MEDIA of TYPE=\(type) has GROUP-ID \"\(groupID.prefix(100))\""
        case .tooLarge(let which, let limit): "too large: more than \(limit) \(which)"
        }
    }
}
