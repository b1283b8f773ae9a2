/// Finds how many leading bytes of a media file play the first N seconds:
/// what preloading by duration needs ("warm the first 10 s of the next
/// track") when all a cache holds is bytes.
///
/// Pure: it reads only the bytes it is given. Call it with the first bytes
/// of the file (the first chunk is usually enough); when it answers
/// ``PrefixEstimate/needsPrefix(_:)`` or ``PrefixEstimate/needsRange(_:)``,
/// fetch that and ask again.
///
/// | format | how |
/// |---|---|
/// | MP3 | Xing/Info or VBRI table of contents, else frame headers walked (exact), else their average bitrate |
/// | MP4, M4A | `moov` sample tables (exact), `moov` at either end |
/// | FLAC | SEEKTABLE, else frame headers walked (exact), else STREAMINFO's average |
///
/// ```swift
/// let first = try store.read(forKey: key, range: 0..<min(length, 262_144))
/// switch PlaybackPrefix.estimate(toPlay: 10, prefix: first, totalLength: length) {
/// case .length(let bytes, _): preload(0..<bytes)
/// case .needsPrefix(let bytes): …  // read more and ask again
/// case .needsRange(let range): …   // fetch the index at the end, pass it as `trailer`
/// case .unsupported: …             // fall back to a byte count
/// }
/// ```
public enum PlaybackPrefix {
    /// - parameters:
    ///   - seconds: the playing time wanted from the start.
    ///   - prefix: the file's first bytes (any number of them).
    ///   - trailer: bytes from elsewhere in the file with their offset
    ///     (what an earlier ``PrefixEstimate/needsRange(_:)`` asked for).
    ///   - totalLength: the file's length, when known.
    public static func estimate(
        toPlay seconds: Double, prefix: some Sequence<UInt8>, trailer: (offset: Int, bytes: [UInt8])? = nil,
        totalLength: Int? = nil
    ) -> PrefixEstimate {
        let window = ByteWindow(Array(prefix))
        let seconds = seconds.isNaN ? 0 : min(max(seconds, 0), 1e9)
        let answer: PrefixEstimate
        if window.matches("fLaC", at: 0) {
            answer = FLACPrefix.estimate(toPlay: seconds, in: window, totalLength: totalLength)
        } else if MP4Prefix.isMP4(window) {
            answer = MP4Prefix.estimate(
                toPlay: seconds, in: window, trailer: trailer.map { ByteWindow($0.bytes, base: $0.offset) },
                totalLength: totalLength)
        } else if window.bytes.count < 4 {
            answer = .needsPrefix(64 * 1024)
        } else {
            answer = MP3Prefix.estimate(toPlay: seconds, in: window, totalLength: totalLength)
        }
        switch answer {
        case .length(let length, let exact):
            // Never more than the file.
            if let totalLength, length > totalLength { return .length(totalLength, exact: exact) }
        case .needsPrefix(let length) where length <= window.end:
            // Asking again for what was given would never end: the whole file
            // (when it was given) is the answer, else ask for more.
            if let totalLength, window.end >= totalLength { return .length(totalLength, exact: false) }
            return .needsPrefix(window.end + 64 * 1024)
        case .needsPrefix(let length):
            if let totalLength, length > totalLength {
                return window.end >= totalLength ? .length(totalLength, exact: false) : .needsPrefix(totalLength)
            }
        case .needsRange(let range):
            if let trailer, trailer.offset <= range.lowerBound, trailer.offset + trailer.bytes.count >= range.upperBound
            {
                return .unsupported
            }
        case .unsupported: break
        }
        return answer
    }
}
