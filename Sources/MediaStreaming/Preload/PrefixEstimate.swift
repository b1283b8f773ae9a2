/// How many leading bytes of a media file play a given number of seconds,
/// as far as the bytes seen so far tell. Made by ``PlaybackPrefix``.
public enum PrefixEstimate: Sendable, Equatable {
    /// The first `length` bytes decode to at least the requested duration.
    /// `exact` is true when frame or sample boundaries were read (the
    /// prefix ends right after the frame that contains the requested time),
    /// false when the length comes from a bitrate or table estimate with a
    /// safety margin.
    case length(Int, exact: Bool)
    /// The bytes seen are not enough to tell; look again with at least the
    /// first `length` bytes (an estimate of where the answer lies).
    case needsPrefix(Int)
    /// The index that tells where each second starts lies elsewhere in the
    /// file (an MP4 whose `moov` box follows its media data): fetch this
    /// range and pass it as `trailer` too. A player needs those bytes as
    /// well before it can start, so a preload keeps them.
    case needsRange(Range<Int>)
    /// The format is not one of MP3, MP4/M4A or FLAC, or the bytes are not
    /// a well-formed file of it.
    case unsupported
}
