import Foundation
import MediaStreaming

/// Plays an item the way AVPlayer asks for bytes: content information
/// with `bytes=0-1`, then `bytes=0-`, cancelled at a seek, then a new
/// request from the seek position to the end. Measures time to first byte.
struct DemoPlayer {
    struct Result {
        var bytes = 0
        var firstByte: Duration?
        var information: ContentInformation?
    }

    let loader: ResourceLoader

    /// Reads `0..<seekFrom`, then seeks to `seekTo` and reads to the end.
    func play(seekFrom: Int, seekTo: Int) async throws -> Result {
        let started = ContinuousClock.now
        let collector = Collector(started: started)
        let opening = collector.request(contentInformation: true, offset: 0, length: 2)
        loader.shouldWaitForLoading(of: opening)
        try await collector.waitUntilFinished(opening)
        let body = collector.request(contentInformation: false, offset: 0, length: seekFrom)
        loader.shouldWaitForLoading(of: body)
        try await collector.waitUntilFinished(body)
        let afterSeek = collector.request(contentInformation: false, offset: seekTo, length: nil)
        loader.shouldWaitForLoading(of: afterSeek)
        try await collector.waitUntilFinished(afterSeek)
        return collector.result
    }
}

/// Collects the answers to a player's requests.
// Unchecked: all mutable state is guarded by `lock`.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private let started: ContinuousClock.Instant
    private var state = DemoPlayer.Result()
    private var finished: Set<ObjectIdentifier> = []
    private var failures: [ObjectIdentifier: StreamingError] = [:]

    init(started: ContinuousClock.Instant) { self.started = started }

    var result: DemoPlayer.Result { lock.withLock { state } }

    func request(contentInformation: Bool, offset: Int, length: Int?) -> LoadingRequest {
        let box = RequestBox()
        let request = LoadingRequest(contentInformation: contentInformation, offset: offset, length: length) {
            [self] event in
            lock.withLock {
                switch event {
                case .contentInformation(let info): state.information = info
                case .data(let data):
                    if state.firstByte == nil { state.firstByte = ContinuousClock.now - started }
                    state.bytes += data.count
                case .finished: if let id = box.id { finished.insert(id) }
                case .failed(let error): if let id = box.id { failures[id] = error }
                }
            }
        }
        box.id = ObjectIdentifier(request)
        return request
    }

    func waitUntilFinished(_ request: LoadingRequest) async throws {
        let id = ObjectIdentifier(request)
        while true {
            let (done, failure) = lock.withLock { (finished.contains(id), failures[id]) }
            if let failure { throw failure }
            if done { return }
            try await Task.sleep(for: .microseconds(200))
        }
    }
}

/// Lets a responder closure know its own request.
// Unchecked: `id` is set once before the request is handed to the loader, and only read after.
private final class RequestBox: @unchecked Sendable {
    var id: ObjectIdentifier?
}
