import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The consumer's end of one response body: the pieces URLSession delivers,
/// and the data task that delivers them, cancelled when the consumer lets
/// go of the body.
///
/// URLSession keeps a task running until its last byte arrives, and the
/// delegate keeps the stream the bytes go into, so a body dropped unread
/// would go on downloading into memory. ``stream`` is held only by its
/// consumer: when the consumer drops it (or stops iterating), this source
/// goes away and cancels the task. Every piece the consumer takes is
/// reported to `taken` (the delegate bounds the bytes not taken yet).
// Unchecked: `iterator` is used by one `next()` at a time (an
// AsyncSequence's iterator is never shared between concurrent callers).
final class HTTPBodySource: @unchecked Sendable {
    private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
    private let task: URLSessionTask
    private let taken: @Sendable (Int) -> Void

    init(
        _ pieces: AsyncThrowingStream<Data, any Error>, of task: URLSessionTask,
        taken: @escaping @Sendable (Int) -> Void = { _ in }
    ) {
        self.iterator = pieces.makeAsyncIterator()
        self.task = task
        self.taken = taken
    }

    deinit { task.cancel() }

    /// The body as the consumer sees it; the only reference to this source.
    var stream: AsyncThrowingStream<Data, any Error> {
        AsyncThrowingStream(unfolding: { try await self.next() })
    }

    private func next() async throws -> Data? {
        let piece = try await iterator.next()
        if let piece { taken(piece.count) }
        return piece
    }
}
