import FuzzEntryPoints

/// Arbitrary bytes as the first bytes of a media file (MP3, MP4, FLAC or
/// anything): `PlaybackPrefix` must answer without trapping, never name
/// more than the file, and a request for more must ask for more than it
/// was given (a preloader would otherwise loop). The first byte picks the
/// seconds asked for and whether the length is known
/// (`StreamingFuzzing.estimatePlaybackPrefix`).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaybackPrefix(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try StreamingFuzzing.estimatePlaybackPrefix(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}
