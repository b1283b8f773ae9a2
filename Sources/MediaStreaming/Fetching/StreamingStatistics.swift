/// Counters of a ``StreamingCache`` or of one ``ResourceLoader``.
public struct StreamingStatistics: Sendable, Equatable {
    /// Requests sent to the origin (probes, ranges, revalidations, retries).
    public var originRequests = 0
    /// Body bytes received from the origin.
    public var originBytes = 0
    /// Chunks written to the store from origin bytes.
    public var chunksFetched = 0
    /// Bytes given to players straight from the store.
    public var bytesServedFromStore = 0
    /// Bytes given to players as they arrived from the origin.
    public var bytesServedFromOrigin = 0
    /// Revalidations sent (conditional requests).
    public var revalidations = 0
    /// Revalidations answered `304 Not Modified`.
    public var notModified = 0
    /// Requests retried after a transient failure.
    public var retries = 0
    /// Chunks not stored because the entry version they were fetched for
    /// had been replaced in the store meanwhile (`StoreError.entryReplaced`).
    public var replacedWrites = 0
    /// Bytes handed to readers that they have not taken yet, now.
    public var readerBacklogBytes = 0
    /// The most ``readerBacklogBytes`` has been: what back-pressure keeps
    /// near ``StreamingConfiguration/readerBufferLimit`` per reader, however
    /// much faster the origin is than the reader.
    public var peakReaderBacklogBytes = 0

    public init() {}

    /// The change from `earlier` to `self` (the backlog figures are
    /// `self`'s own: a level and a peak, not counters).
    public func since(_ earlier: StreamingStatistics) -> StreamingStatistics {
        var delta = StreamingStatistics()
        delta.originRequests = originRequests - earlier.originRequests
        delta.originBytes = originBytes - earlier.originBytes
        delta.chunksFetched = chunksFetched - earlier.chunksFetched
        delta.bytesServedFromStore = bytesServedFromStore - earlier.bytesServedFromStore
        delta.bytesServedFromOrigin = bytesServedFromOrigin - earlier.bytesServedFromOrigin
        delta.revalidations = revalidations - earlier.revalidations
        delta.notModified = notModified - earlier.notModified
        delta.retries = retries - earlier.retries
        delta.replacedWrites = replacedWrites - earlier.replacedWrites
        delta.readerBacklogBytes = readerBacklogBytes
        delta.peakReaderBacklogBytes = peakReaderBacklogBytes
        return delta
    }
}
