import Foundation

/// The bytes a transfer hands one reader, in order, as an `AsyncSequence`
/// over a ``ReaderChannel``. Dropping it (the reader stopped or moved on)
/// drops its backlog and tells the fetcher, which stops a transfer nobody
/// reads when its bytes are not cached.
final class ReaderStream: AsyncSequence, Sendable {
    typealias Element = Data

    /// Takes the channel's pieces one by one.
    struct AsyncIterator: AsyncIteratorProtocol {
        let stream: ReaderStream

        mutating func next() async throws -> Data? { try await stream.channel.next() }
    }

    let channel: ReaderChannel
    private let onDrop: @Sendable () -> Void

    init(channel: ReaderChannel, onDrop: @escaping @Sendable () -> Void) {
        self.channel = channel
        self.onDrop = onDrop
    }

    deinit {
        channel.close()
        onDrop()
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }
}
