/// How an entry's chunks are shared with other entries (deduplication).
public struct ChunkSharing: Sendable, Equatable {
    /// Chunks the entry references.
    public var chunkCount: Int
    /// Of those, chunks that some other entry references too.
    public var sharedChunkCount: Int
    /// The other entries (complete or partial) that share a chunk with it.
    public var sharingKeys: [String]
}
