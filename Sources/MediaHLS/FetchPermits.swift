import MediaSupport

/// At most `count` holders at once: a run's origin fetches, so that a
/// resource whose body is in can be published (waiting for the store's
/// commit) while the next one is fetched. Acquired in arrival order. A
/// waiter is not woken by cancellation: every holder releases (a
/// cancelled one at once), so a waiter goes on and sees it was cancelled.
final class FetchPermits: Sendable {
    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state: Locked<State>

    init(_ count: Int) { state = Locked(State(free: max(1, count))) }

    /// Waits for a permit and takes it; give it back with ``release()``.
    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives a permit back: to the first waiter, if any.
    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

/// One holder's permit of a ``FetchPermits``: released once, by whichever
/// comes first (the fetch's body is in, or the holder is done).
final class FetchPermit: Sendable {
    private let permits: FetchPermits
    private let held = Locked(true)

    init(_ permits: FetchPermits) { self.permits = permits }

    func release() {
        let wasHeld = held.withLock { held -> Bool in
            defer { held = false }
            return held
        }
        if wasHeld { permits.release() }
    }
}
