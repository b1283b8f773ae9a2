import Foundation
import MediaStreaming

/// The player side of the playback bench: answers one ``LoadingRequest``
/// by counting its bytes (nothing is kept), noting when the first one came,
/// optionally sampling memory once per MiB, and letting the bench wait,
/// blocking, for the end.
final class PlaybackConsumer: @unchecked Sendable {
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)
    private let sampleMemory: Bool
    private var started: UInt64 = 0
    private var received = 0
    private var firstByte: UInt64?
    private var failure: StreamingError?
    private var sampler: MemorySampler?
    private var nextSample = 0

    /// - parameter memory: a sampler to feed once per MiB received (`nil`: no sampling).
    init(memory: MemorySampler? = nil) {
        sampleMemory = memory != nil
        sampler = memory
    }

    /// Sends a loading request for `offset` (to `length`, or to the end) to `loader`, and waits until it ended.
    func load(_ loader: ResourceLoader, contentInformation: Bool = true, offset: Int = 0, length: Int? = nil)
        throws(StreamingError)
    {
        let request = LoadingRequest(contentInformation: contentInformation, offset: offset, length: length) {
            [self] event in
            handle(event)
        }
        lock.withLock { started = Stopwatch.now() }
        loader.shouldWaitForLoading(of: request)
        done.wait()
        if let failure = lock.withLock({ failure }) { throw failure }
    }

    /// Bytes received.
    var bytes: Int { lock.withLock { received } }
    /// Seconds from sending the request to its first byte.
    var secondsToFirstByte: Double? { lock.withLock { firstByte.map { Double($0 - started) / 1e9 } } }
    /// The memory sampler, as fed.
    var memory: MemorySampler? { lock.withLock { sampler } }

    private func handle(_ event: LoadingEvent) {
        switch event {
        case .contentInformation: break
        case .data(let data):
            lock.withLock {
                if firstByte == nil { firstByte = Stopwatch.now() }
                received += data.count
                if sampleMemory && received >= nextSample {
                    sampler?.sample()
                    nextSample = received + (1 << 20)
                }
            }
        case .finished:
            done.signal()
        case .failed(let error):
            lock.withLock { failure = error }
            done.signal()
        }
    }
}
