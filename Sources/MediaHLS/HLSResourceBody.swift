import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming

/// An HLS resource as ``HLSResourceStore`` obtained it.
public enum HLSResourceBody: Sendable, Equatable {
    /// Its bytes, held whole: a playlist (at most `PlaylistLimits.maxBytes`).
    case bytes(Data)
    /// Complete in the store, in this entry (read it in pieces with
    /// ``HLSResourceStore/read(_:range:version:)``): any other resource.
    case stored(EntryInfo)
}
