import MediaStreaming

/// Arbitrary bytes as the first bytes of a media file (MP3, MP4, FLAC or
/// anything): `PlaybackPrefix` must answer without trapping, never name
/// more than the file, and a request for more must ask for more than it
/// was given (a preloader would otherwise loop). The first byte picks the
/// seconds asked for and whether the length is known.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaybackPrefix(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let input = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let selector = input.first else { return 0 }
    let bytes = Array(input.dropFirst())
    let seconds = Double(selector & 0x7F) / 4
    let total: Int? = selector & 0x80 != 0 ? bytes.count : nil
    switch PlaybackPrefix.estimate(toPlay: seconds, prefix: bytes, totalLength: total) {
    case .length(let length, _): precondition(length >= 0 && length <= (total ?? .max))
    case .needsPrefix(let length): precondition(length > bytes.count)
    case .needsRange(let range): precondition(!range.isEmpty)
    case .unsupported: break
    }
    return 0
}
