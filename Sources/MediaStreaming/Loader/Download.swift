import Foundation

/// One download from the origin over a chunk-aligned span of a resource,
/// fanned out to the readers subscribed to it.
///
/// Only touched on its ``ResourceFetcher``'s executor (hence unchecked).
final class Download: @unchecked Sendable {
    /// A reader waiting for bytes from `offset` on.
    struct Subscriber {
        var offset: Int
        let channel: ReaderChannel
    }

    let id: Int
    /// The first byte (chunk-aligned).
    let start: Int
    /// One past the last byte it fetches; `Int.max` while the length is unknown.
    var end: Int
    /// The next byte to receive.
    var position: Int
    /// The chunk-aligned offset of `buffer`'s first byte: bytes before it are in the store.
    var bufferStart: Int
    /// Received bytes not yet written as a whole chunk.
    var buffer = Data()
    var subscribers: [Int: Subscriber] = [:]
    /// Whether it resolves the content information (the first request).
    let isProbe: Bool
    /// Validators for a conditional first request.
    var ifNoneMatch: String?
    var ifModifiedSince: String?
    let url: URL
    let headers: [String: String]
    var isStopped = false
    var lastProgress = ContinuousClock.now
    /// Waiting for a slow reader to take its backlog (not a stall).
    var waitingForReaders = false
    var task: Task<Void, Never>?
    /// The MIME type the first response declared.
    var declaredMIMEType: String?
    /// The ``EntryInfo/version`` of the store entry its bytes fill; `nil`
    /// when they are not to be stored (not prepared yet, caching skipped,
    /// or that version was replaced meanwhile).
    var entryVersion: UInt64?

    init(id: Int, start: Int, end: Int, url: URL, headers: [String: String], isProbe: Bool) {
        self.id = id
        self.start = start
        self.end = end
        self.position = start
        self.bufferStart = start
        self.url = url
        self.headers = headers
        self.isProbe = isProbe
    }
}
