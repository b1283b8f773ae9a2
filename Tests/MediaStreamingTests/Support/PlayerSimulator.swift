import Foundation
import MediaStreaming

/// Issues loading requests the way AVPlayer does: a content-information
/// request with `bytes=0-1`, then `bytes=0-`, seeks (a new request at an
/// offset), cancellations and duplicate requests.
struct PlayerSimulator {
    /// What one loading request got.
    struct Outcome: Sendable {
        var information: ContentInformation?
        var data = Data()
        var error: StreamingError?
        var finished = false
        /// Seconds from issuing the request to its first byte.
        var firstByte: Double?
    }

    /// A request in flight, with what it has received so far.
    final class Handle: Sendable {
        let request: LoadingRequest
        let state: Box
        init(request: LoadingRequest, state: Box) {
            self.request = request
            self.state = state
        }

        var received: Int { state.withLock { $0.outcome.data.count } }

        /// Waits until it finished or failed.
        func outcome() async -> Outcome {
            await withCheckedContinuation { continuation in
                let done = state.withLock { state -> Outcome? in
                    if state.outcome.finished || state.outcome.error != nil { return state.outcome }
                    state.waiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(returning: done) }
            }
        }

        /// Waits until at least `bytes` arrived (or it ended).
        func waitFor(bytes: Int) async {
            while true {
                let state = state.withLock { ($0.outcome.data.count, $0.outcome.finished || $0.outcome.error != nil) }
                if state.0 >= bytes || state.1 || Task.isCancelled { return }
                try? await Task.sleep(for: .milliseconds(2))
            }
        }
    }

    final class Box: @unchecked Sendable {
        struct State {
            var outcome = Outcome()
            var waiters: [CheckedContinuation<Outcome, Never>] = []
        }
        private let lock = NSLock()
        private var state = State()
        func withLock<R>(_ body: (inout State) -> R) -> R { lock.withLock { body(&state) } }
    }

    let loader: ResourceLoader

    /// Sends a loading request; returns at once.
    func start(contentInformation: Bool = false, offset: Int?, length: Int?) -> Handle {
        let box = Box()
        let started = ContinuousClock.now
        let request = LoadingRequest(contentInformation: contentInformation, offset: offset, length: length) { event in
            let waiters = box.withLock { state -> [CheckedContinuation<Outcome, Never>] in
                switch event {
                case .contentInformation(let info): state.outcome.information = info
                case .data(let data):
                    if state.outcome.firstByte == nil {
                        let elapsed = ContinuousClock.now - started
                        state.outcome.firstByte =
                            Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)
                    }
                    state.outcome.data.append(data)
                case .finished: state.outcome.finished = true
                case .failed(let error): state.outcome.error = error
                }
                guard state.outcome.finished || state.outcome.error != nil else { return [] }
                defer { state.waiters = [] }
                return state.waiters
            }
            let outcome = box.withLock { $0.outcome }
            for waiter in waiters { waiter.resume(returning: outcome) }
        }
        loader.shouldWaitForLoading(of: request)
        return Handle(request: request, state: box)
    }

    /// One request, awaited.
    func load(contentInformation: Bool = false, offset: Int?, length: Int?) async -> Outcome {
        await start(contentInformation: contentInformation, offset: offset, length: length).outcome()
    }

    /// AVPlayer's opening: content information with `bytes=0-1`, then `bytes=0-`.
    /// Returns the information and the whole body.
    func play() async throws -> (ContentInformation, Data, firstByte: Double) {
        let opening = await load(contentInformation: true, offset: 0, length: 2)
        if let error = opening.error { throw error }
        guard let info = opening.information, opening.data.count == min(2, info.contentLength) else {
            throw FixtureFailure(
                message:
                    "opening request got \(opening.data.count) bytes, info \(String(describing: opening.information))")
        }
        let body = await load(offset: 0, length: nil)
        if let error = body.error { throw error }
        return (info, body.data, opening.firstByte ?? 0)
    }

    /// Cancels a request (as AVFoundation does on a seek).
    func cancel(_ handle: Handle) { loader.didCancel(handle.request) }
}
