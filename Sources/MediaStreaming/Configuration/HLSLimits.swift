import HLSPlaylist

/// What one HLS resource fetched from an origin may cost: each is a bound
/// on a hostile origin. Beyond one, the transfer is stopped at once (the
/// origin connection dropped), nothing of it is stored, and the fetch
/// fails with `HLSResourceError.resourceTooLarge(url:bytes:limit:)` (a
/// segment, init segment or key) or a `PlaylistError` whose reason is
/// `PlaylistError.Reason.tooLarge(_:limit:)` (a playlist).
public struct HLSLimits: Sendable, Hashable {
    /// Bytes of one segment, init segment or other resource (streamed into
    /// the store as it arrives, never held whole). 64 MiB by default.
    public var maxResourceBytes: Int
    /// Bytes of one key. 64 KiB by default: an AES-128 key is 16 bytes,
    /// and other key formats a player may fetch (key lists, licence
    /// blobs) are a few KiB; more is no key.
    public var maxKeyBytes: Int
    /// The bounds of a playlist (read whole, parsed and rewritten).
    public var playlist: PlaylistLimits

    /// Limits with the stated defaults; each at least 1.
    ///
    /// - Parameters:
    ///   - maxResourceBytes: bytes of one segment, init segment or other resource.
    ///   - maxKeyBytes: bytes of one key.
    ///   - playlist: the bounds of a playlist.
    public init(
        maxResourceBytes: Int = 64 << 20, maxKeyBytes: Int = 64 << 10, playlist: PlaylistLimits = PlaylistLimits()
    ) {
        self.maxResourceBytes = max(1, maxResourceBytes)
        self.maxKeyBytes = max(1, maxKeyBytes)
        self.playlist = playlist
    }

    /// The most bytes a resource of `kind` may have (playlists: `PlaylistLimits.maxBytes`).
    public func maxBytes(of kind: HLSResourceKind) -> Int {
        switch kind {
        case .masterPlaylist, .mediaPlaylist, .iFramePlaylist: playlist.maxBytes
        case .key: maxKeyBytes
        case .initializationSegment, .segment, .other: maxResourceBytes
        }
    }
}

extension HLSResourceKind {
    /// Whether the resource is a playlist (read whole and parsed, not streamed into the store).
    public var isPlaylist: Bool { self == .masterPlaylist || self == .mediaPlaylist || self == .iFramePlaylist }
}
