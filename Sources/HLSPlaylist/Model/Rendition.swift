import Foundation

/// One `EXT-X-MEDIA` of a master playlist: an alternative rendition
/// (an audio language, a subtitle track, …) in a group.
public struct Rendition: Sendable, Hashable {
    /// `TYPE`.
    public enum MediaType: String, Sendable, Hashable {
        case audio = "AUDIO"
        case video = "VIDEO"
        case subtitles = "SUBTITLES"
        case closedCaptions = "CLOSED-CAPTIONS"
    }

    public let type: MediaType
    /// `GROUP-ID`.
    public let groupID: String
    /// `NAME`.
    public let name: String
    /// `LANGUAGE` (an RFC 5646 tag such as `en` or `pt-BR`).
    public let language: String?
    /// `ASSOC-LANGUAGE`.
    public let associatedLanguage: String?
    /// `DEFAULT=YES`.
    public let isDefault: Bool
    /// `AUTOSELECT=YES`.
    public let autoselect: Bool
    /// `FORCED=YES`.
    public let isForced: Bool
    /// The resolved `URI` of its media playlist; nil when the rendition is
    /// carried in the variant's own stream (or is closed captions).
    public let url: URL?
    /// `INSTREAM-ID` (closed captions).
    public let instreamID: String?
    /// `CHARACTERISTICS`, split at the commas.
    public let characteristics: [String]
    /// `CHANNELS`.
    public let channels: String?

    public init(
        type: MediaType, groupID: String, name: String, language: String? = nil, associatedLanguage: String? = nil,
        isDefault: Bool = false, autoselect: Bool = false, isForced: Bool = false, url: URL? = nil,
        instreamID: String? = nil, characteristics: [String] = [], channels: String? = nil
    ) {
        self.type = type
        self.groupID = groupID
        self.name = name
        self.language = language
        self.associatedLanguage = associatedLanguage
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.isForced = isForced
        self.url = url
        self.instreamID = instreamID
        self.characteristics = characteristics
        self.channels = channels
    }
}
