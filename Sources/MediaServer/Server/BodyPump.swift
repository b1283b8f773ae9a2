import Foundation
import MediaStreaming
import MediaSupport

/// Feeds one response body from a `ResourceLoader` to a connection's
/// thread through `LoadingRequest`s (the path a `StreamingItem` takes),
/// with back-pressure from the socket.
///
/// The loader pushes; the connection pulls with ``next(until:)``. When more
/// than `highWater` bytes wait untaken, the loading request is cancelled
/// (a download it joined goes on to the end of its current request, into
/// the store, then stops if nobody else reads it); when the connection
/// takes them, a new request continues from the next byte (from the
/// store, or joining a download) while they are written. Memory per
/// connection stays under about twice `highWater` plus a chunk, whatever
/// the client's speed: a stalled client holds its reading back. Every wait
/// takes a deadline: the connection decides how long the origin may take
/// and watches its client meanwhile.
final class BodyPump: BodyStream, @unchecked Sendable {
    /// Requests cancelled for back-pressure kept for a second cancel (see
    /// `stale`); older ones are let go, so a long body holds a bounded few.
    static let maxStale = 8

    private let loader: ResourceLoader
    /// The bytes to send; an open end (`Int.max`) until the content information clamps it.
    private var range: Range<Int>
    private let highWater: Int
    /// Whether the first request also asks for the content information.
    private var asksInformation: Bool
    private var information: ContentInformation?
    private let condition = NSCondition()
    private var pieces: [Data] = []
    private var buffered = 0
    /// Bytes accepted into the buffer so far: the next request starts at `range.lowerBound + received`.
    private var received = 0
    private var generation = 0
    private var current: LoadingRequest?
    /// Requests cancelled for back-pressure, by generation: one still
    /// answering (its cancel raced its start) is cancelled again.
    private var stale: [Int: LoadingRequest] = [:]
    private var paused = false
    private var finished = false
    private var failure: StreamingError?
    private var cancelled = false
    private var started = false

    /// - parameter range: the bytes wanted; its upper bound may be `Int.max` (to the end)
    ///   when `withInformation` is set.
    /// - parameter withInformation: the first loading request also asks for the content
    ///   information (see ``waitForInformation(until:)``): a response whose range is known
    ///   before its length starts with one round trip to the loader instead of two.
    init(loader: ResourceLoader, range: Range<Int>, highWater: Int, withInformation: Bool = false) {
        self.loader = loader
        self.range = range
        self.highWater = highWater
        self.asksInformation = withInformation
    }

    /// The bytes this pump sends (clamped to the length once it is known).
    var body: Range<Int> { condition.withLock { range } }

    /// Waits until `deadline` for the content information the first request
    /// asked for and, when it leaves bytes to send, for the first of them
    /// (or the end) as well: the connection then writes the head and those
    /// bytes after one wake-up, not two. `WaitStep/pending` when the
    /// information has not come by `deadline`.
    func waitForInformation(until deadline: Date) -> WaitStep<Result<ContentInformation, StreamingError>> {
        condition.lock()
        defer { condition.unlock() }
        while failure == nil && !cancelled
            && (information == nil || (pieces.isEmpty && !finished && received < range.count))
        {
            if !condition.wait(until: deadline) { break }
        }
        if let information { return .done(.success(information)) }
        if failure == nil && !cancelled { return .pending }
        return .done(.failure(failure ?? .cancelled))
    }

    /// Sends the first loading request; later calls do nothing.
    func start() {
        condition.lock()
        let request = started ? nil : makeRequest()
        started = true
        condition.unlock()
        if let request { loader.shouldWaitForLoading(of: request) }
    }

    /// Under the lock: a request for the bytes not received yet (only for
    /// the content information when no byte is wanted but it is).
    private func makeRequest() -> LoadingRequest? {
        guard !cancelled, received < range.count || asksInformation else { return nil }
        generation += 1
        let generation = self.generation
        let offset = range.lowerBound + received
        let wantsBytes = received < range.count
        let length = range.upperBound == Int.max ? nil : range.upperBound - offset
        let request = LoadingRequest(
            contentInformation: asksInformation, offset: wantsBytes ? offset : nil, length: length
        ) {
            [weak self] event in
            self?.receive(event, generation: generation)
        }
        current = request
        paused = false
        asksInformation = false
        return request
    }

    private func receive(_ event: LoadingEvent, generation: Int) {
        var toCancel: LoadingRequest?
        condition.lock()
        guard generation == self.generation, !cancelled else {
            let late = stale.removeValue(forKey: generation)
            condition.unlock()
            if let late { loader.didCancel(late) }
            return
        }
        switch event {
        case .data(let data):
            let room = range.count - received
            let piece = data.count > room ? Data(data.prefix(room)) : data
            if !piece.isEmpty {
                pieces.append(piece)
                buffered += piece.count
                received += piece.count
            }
            if received >= range.count {
                finished = true
            } else if buffered >= highWater {
                paused = true
                toCancel = current
                stale[generation] = current
                if stale.count > Self.maxStale, let oldest = stale.keys.min() { stale[oldest] = nil }
                current = nil
                self.generation += 1
            }
        case .finished:
            if received >= range.count {
                finished = true
            } else {
                failure = .origin(.truncated(expected: range.count, received: received))
            }
        case .failed(let error):
            failure = error
        case .contentInformation(let info):
            information = info
            let end = max(range.lowerBound, min(range.upperBound, info.contentLength))
            range = range.lowerBound..<end
        }
        condition.broadcast()
        condition.unlock()
        if let toCancel { loader.didCancel(toCancel) }
    }

    /// Waits until `deadline` for bytes (``BodyStep/pending`` when none came);
    /// blocks the calling thread (a connection's, never the pool's).
    func next(until deadline: Date) -> BodyStep {
        condition.lock()
        while pieces.isEmpty && !finished && failure == nil && !cancelled {
            if !condition.wait(until: deadline) { break }
        }
        if !pieces.isEmpty {
            let taken = pieces
            pieces.removeAll(keepingCapacity: true)
            buffered = 0
            var resume: LoadingRequest?
            if paused { resume = makeRequest() }
            condition.unlock()
            if let resume { loader.shouldWaitForLoading(of: resume) }
            return .data(taken)
        }
        defer { condition.unlock() }
        if let failure { return .failed(failure) }
        if cancelled { return .failed(.cancelled) }
        return finished ? .end : .pending
    }

    /// Stops: the loading request is cancelled and ``next(until:)`` returns. Any thread.
    func cancel() {
        condition.lock()
        cancelled = true
        let request = current
        current = nil
        generation += 1
        condition.broadcast()
        condition.unlock()
        if let request { loader.didCancel(request) }
    }
}
