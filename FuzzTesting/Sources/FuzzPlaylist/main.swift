import FuzzEntryPoints

/// M3U8 playlists: parsing, and for what parses, selection, planning and
/// rewriting with their invariants (StreamingFuzzing.parsePlaylist).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaylist(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try StreamingFuzzing.parsePlaylist(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}
