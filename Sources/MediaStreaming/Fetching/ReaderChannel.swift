import Foundation

/// The queue between a transfer and one reader: the bytes the transfer
/// has handed over and the reader has not taken yet (its backlog).
///
/// The backlog is counted so that a reader slower than the origin is
/// noticed: the fetcher then detaches the reader (it goes on from the
/// store) or, when the bytes are not cached, waits for it with
/// ``waitForBacklog(atMost:)``. Either way memory stays bounded.
///
/// The transfer's side (``send(_:)``, ``finish(throwing:)``,
/// ``waitForBacklog(atMost:)``) runs on the fetcher; the reader's side
/// (``next()``, ``close()``) on the reader's task.
// Unchecked: `state` holds continuations (not Sendable) and is only touched under `lock`.
final class ReaderChannel: @unchecked Sendable {
    private struct State {
        var pieces: [Data] = []
        var head = 0
        var backlog = 0
        var ended = false
        var failure: (any Error)?
        /// The reader is gone: bytes sent now are dropped.
        var closed = false
        var readerCancelled = false
        /// The reader's task was cancelled while bytes were queued for it:
        /// it takes them without waiting (so without its cancellation
        /// handler), then leaves; the transfer need not send it more.
        var readerLeaving = false
        var drainCancelled = false
        var reader: CheckedContinuation<Data?, any Error>?
        var drain: (limit: Int, continuation: CheckedContinuation<Void, Never>)?

        /// Whether the reader takes what is sent from now on.
        var isReaderStaying: Bool { !closed && !readerCancelled && !readerLeaving }
    }

    private let lock = NSLock()
    private var state = State()
    /// Told of each change of the backlog: + when bytes are queued, − when
    /// they are taken or dropped. Called under the channel's lock, so that
    /// the changes reach the counters in the order they happened: told
    /// outside it, a reader's − could arrive after the transfer's next +,
    /// and a sum of backlogs (and its peak) would count bytes that were
    /// never queued at once. It must not call back into the channel.
    private let onBacklogChange: @Sendable (Int) -> Void

    init(onBacklogChange: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.onBacklogChange = onBacklogChange
    }

    /// Bytes handed over and not taken yet.
    var backlog: Int { lock.withLock { state.backlog } }

    // MARK: The transfer's side

    /// Hands `data` to the reader (dropped once the reader is gone or the
    /// channel ended).
    ///
    /// - returns: `false` when the reader is gone or leaving (closed, or
    ///   its task was cancelled, seen when it last waited or took bytes):
    ///   it takes nothing more than what is queued, so the transfer need
    ///   not go on for it.
    @discardableResult
    func send(_ data: Data) -> Bool {
        guard !data.isEmpty else { return lock.withLock { state.isReaderStaying } }
        enum Outcome { case dropped, queued, handed(CheckedContinuation<Data?, any Error>) }
        let (outcome, staying) = lock.withLock { () -> (Outcome, Bool) in
            let staying = state.isReaderStaying
            if state.closed || state.ended { return (.dropped, staying) }
            if let reader = state.reader {
                state.reader = nil
                return (.handed(reader), staying)
            }
            state.pieces.append(data)
            state.backlog += data.count
            onBacklogChange(data.count)
            return (.queued, staying)
        }
        if case .handed(let reader) = outcome { reader.resume(returning: data) }
        return staying
    }

    /// Ends the channel: the reader gets what is queued, then the end (or `error`).
    func finish(throwing error: (any Error)? = nil) {
        let reader = lock.withLock { () -> CheckedContinuation<Data?, any Error>? in
            guard !state.ended else { return nil }
            state.ended = true
            state.failure = error
            defer { state.reader = nil }
            return state.reader
        }
        if let error { reader?.resume(throwing: error) } else { reader?.resume(returning: nil) }
    }

    /// Waits until the backlog is at most `limit`, the reader is gone, or
    /// the calling task is cancelled.
    func waitForBacklog(atMost limit: Int) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock { () -> Bool in
                    if state.backlog <= limit || state.closed || state.drainCancelled { return true }
                    state.drain = (limit, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let drain = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                state.drainCancelled = true
                defer { state.drain = nil }
                return state.drain?.continuation
            }
            drain?.resume()
        }
    }

    // MARK: The reader's side

    /// The next bytes, `nil` at the end; throws the transfer's error, or
    /// `CancellationError` when the reading task is cancelled.
    func next() async throws -> Data? {
        // A reader slower than the transfer always finds bytes queued and
        // never waits: its cancellation is seen here, not by the handler.
        if Task.isCancelled { lock.withLock { state.readerLeaving = true } }
        if let ready = try take() { return ready.value }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                do {
                    if let ready = try take(orWait: continuation) { continuation.resume(returning: ready.value) }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        } onCancel: {
            let reader = lock.withLock { () -> CheckedContinuation<Data?, any Error>? in
                state.readerCancelled = true
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(throwing: CancellationError())
        }
    }

    /// The reader is gone: drops the backlog and releases a waiting transfer.
    func close() {
        let drain = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            state.closed = true
            if state.backlog > 0 { onBacklogChange(-state.backlog) }
            state.backlog = 0
            state.pieces = []
            state.head = 0
            defer { state.drain = nil }
            return state.drain?.continuation
        }
        drain?.resume()
    }

    /// A value that may be `nil` (the end), boxed so that "nothing yet" can be told apart.
    private struct Ready { var value: Data? }

    /// Takes the next piece, or the end, or the failure; with `waiter`,
    /// registers it when there is nothing yet (and returns `nil`).
    private func take(orWait waiter: CheckedContinuation<Data?, any Error>? = nil) throws -> Ready? {
        let (ready, drain) = try lock.withLock { () throws -> (Ready?, CheckedContinuation<Void, Never>?) in
            if state.head < state.pieces.count {
                let piece = state.pieces[state.head]
                state.head += 1
                if state.head == state.pieces.count {
                    state.pieces.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                state.backlog -= piece.count
                onBacklogChange(-piece.count)
                var drain: CheckedContinuation<Void, Never>?
                if let waiting = state.drain, state.backlog <= waiting.limit {
                    drain = waiting.continuation
                    state.drain = nil
                }
                return (Ready(value: piece), drain)
            }
            if state.readerCancelled { throw CancellationError() }
            if let failure = state.failure { throw failure }
            if state.ended || state.closed { return (Ready(value: nil), nil) }
            if let waiter { state.reader = waiter }
            return (nil, nil)
        }
        drain?.resume()
        return ready
    }
}
