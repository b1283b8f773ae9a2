import Foundation

/// Everything an offline download of an HLS asset fetches, in the order to
/// fetch it, each resource once.
public struct HLSDownloadPlan: Sendable, Hashable {
    /// One media playlist of the plan and what it adds up to.
    public struct Track: Sendable, Hashable {
        public let playlistURL: URL
        /// nil for the variant's own stream.
        public let mediaType: Rendition.MediaType?
        public let segmentCount: Int
        /// The sum of its segment durations, in seconds.
        public let duration: Double
    }

    /// The resources, playlists first, then keys, init segments and
    /// segments interleaved across the tracks by start time (so audio and
    /// subtitles keep pace with video when playing while downloading).
    public let resources: [HLSResource]
    /// The media playlists, variant first.
    public let tracks: [Track]

    public init(resources: [HLSResource], tracks: [Track]) {
        self.resources = resources
        self.tracks = tracks
    }

    /// The resources of `kind`, in plan order.
    public func resources(of kind: HLSResourceKind) -> [HLSResource] { resources.filter { $0.kind == kind } }

    /// The cache keys of every resource.
    public var cacheKeys: Set<HLSResourceKey> { Set(resources.map(\.cacheKey)) }

    /// The resources whose cache keys are not in `present`, in plan order:
    /// what a resumed download, or one adding a media selection to an asset
    /// already kept, still has to fetch.
    public func missing(from present: Set<HLSResourceKey>) -> [HLSResource] {
        resources.filter { !present.contains($0.cacheKey) }
    }
}
