import Foundation

/// One transfer from the origin over a span of a resource (from a chunk
/// boundary or the end of a short chunk stored),
/// fanned out to the readers subscribed to it; its bytes go to the store
/// through its ``ChunkSink``.
///
/// Only touched on its ``ResourceFetcher``'s executor (hence unchecked).
final class Transfer: @unchecked Sendable {
    /// A reader waiting for bytes from `offset` on.
    struct Subscriber {
        var offset: Int
        let channel: ReaderChannel
        /// Who reads: a player, a preload or a transfer.
        let priority: FetchPriority
        /// The offset past which it wants nothing (a preload's prefix); `nil`: to the end.
        let until: Int?
    }

    let id: Int
    /// The first byte (a chunk boundary, or the end of a short chunk stored).
    let start: Int
    /// One past the last byte it fetches; `Int.max` while the length is unknown.
    var end: Int
    /// Buffers received bytes to chunk boundaries and writes them.
    let sink: ChunkSink
    var subscribers: [Int: Subscriber] = [:]
    /// Whether it resolves the content information (the first request).
    let isProbe: Bool
    /// Validators for a conditional first request.
    var ifNoneMatch: String?
    var ifModifiedSince: String?
    let url: URL
    let headers: [String: String]
    var isStopped = false
    /// Stopped because the resource changed: its readers fail once the
    /// change is handled (the old entry dropped), never see its bytes just end.
    var stoppedByChange = false
    var lastProgress = ContinuousClock.now
    /// The pace of its current response (`nil` before its first head).
    var pace: TransferPace?
    /// Set when its last reader left while its bytes are stored: it fetches
    /// up to about a request's worth past where that reader left (to the
    /// chunk boundary after this offset), no further.
    var unreadLimit: Int?
    /// Waiting for a slow reader to take its backlog (not a stall).
    var waitingForReaders = false
    var task: Task<Void, Never>?
    /// The MIME type the first response declared.
    var declaredMIMEType: String?
    /// Its place in the cache's ``FetchScheduler``.
    let ticket: FetchTicket
    /// The priority of whoever waits for the content information a probe
    /// resolves (it runs at least at that one until then).
    var probePriority: FetchPriority
    /// The priority and idleness last told to the scheduler.
    var scheduledPriority: FetchPriority
    var scheduledIdle = false
    /// Its last reader, a transfer or a preload, was stopped: it ends its
    /// response at the next chunk boundary instead of finishing the request.
    var windingDown = false
    /// Bytes its first request asks for while the length is unknown, when
    /// not a whole request's worth (a preload's probe asks for little).
    var firstRequestBytes: Int?
    /// Bytes each request asks for once the length is known, when not the
    /// runner's ``TransferRunner/requestBytes`` (a download's segment asks
    /// for more per request: fewer round trips).
    var requestBytes: Int?
    /// Whether a `200` (the whole resource) to one of its range requests
    /// is refused rather than read on from its first byte: a segment of a
    /// download over several connections, where an origin that ignores
    /// `Range` would send every connection the bytes before its segment.
    var refusesWholeBody = false
    /// Set once a response was refused for good (and the transfer is
    /// failing with it): no reader joins it from then on, though it is
    /// still listed until its failure is told.
    var isFailing = false
    /// The preparation of the entry its sink writes into, while that runs
    /// (``EntryPreparation``): a probe's own, or the one running when it
    /// was planned. Its sink writes nothing before it is done, and is then
    /// bound to the version it prepared (none when it bound nothing).
    var entryPreparation: EntryPreparation?
    /// Waiting for its entry's preparation (the stall watchdog does not count it).
    var waitingForEntry = false

    init(
        id: Int, start: Int, end: Int, url: URL, headers: [String: String], isProbe: Bool, sink: ChunkSink,
        ticket: FetchTicket
    ) {
        self.ticket = ticket
        self.probePriority = ticket.priority
        self.scheduledPriority = ticket.priority
        self.id = id
        self.start = start
        self.end = end
        self.url = url
        self.headers = headers
        self.isProbe = isProbe
        self.sink = sink
    }

    /// The next byte to receive.
    var position: Int { sink.position }

    /// The offset of the first byte not yet in the store
    /// (bytes from it to ``position`` are buffered in the sink).
    var bufferStart: Int { sink.bufferStart }

    /// Whether the first request is conditional (revalidates a stored entry).
    var isConditional: Bool { ifNoneMatch != nil || ifModifiedSince != nil }
}
