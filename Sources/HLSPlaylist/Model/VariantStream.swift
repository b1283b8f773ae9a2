import Foundation

/// One `EXT-X-STREAM-INF` of a master playlist: a media playlist of one
/// bit rate, and the rendition groups it plays with.
public struct VariantStream: Sendable, Hashable {
    /// The resolved URI of its media playlist.
    public let url: URL
    /// `BANDWIDTH`: the peak bit rate, bits per second.
    public let bandwidth: Int
    /// `AVERAGE-BANDWIDTH`, bits per second.
    public let averageBandwidth: Int?
    /// `CODECS`, split at the commas.
    public let codecs: [String]
    /// `RESOLUTION`.
    public let resolution: Resolution?
    /// `FRAME-RATE`.
    public let frameRate: Double?
    /// `AUDIO`: the GROUP-ID of its audio renditions.
    public let audioGroup: String?
    /// `VIDEO`: the GROUP-ID of its video renditions.
    public let videoGroup: String?
    /// `SUBTITLES`: the GROUP-ID of its subtitle renditions.
    public let subtitlesGroup: String?
    /// `CLOSED-CAPTIONS`: the GROUP-ID of its closed captions; nil also for `NONE`.
    public let closedCaptionsGroup: String?

    public init(
        url: URL, bandwidth: Int, averageBandwidth: Int? = nil, codecs: [String] = [], resolution: Resolution? = nil,
        frameRate: Double? = nil, audioGroup: String? = nil, videoGroup: String? = nil, subtitlesGroup: String? = nil,
        closedCaptionsGroup: String? = nil
    ) {
        self.url = url
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.resolution = resolution
        self.frameRate = frameRate
        self.audioGroup = audioGroup
        self.videoGroup = videoGroup
        self.subtitlesGroup = subtitlesGroup
        self.closedCaptionsGroup = closedCaptionsGroup
    }
}
