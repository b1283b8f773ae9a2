import MediaSupport

/// A test hook that holds its next call at a gate once armed: calls
/// before ``arm(_:)``, and after the one held, go through. Set
/// ``pass()`` as an async configuration hook (an index save's, a
/// release's), arm it right before the call to hold.
final class ArmedGate: Sendable {
    private let armed = Locked<AsyncGate?>(nil)

    /// The next ``pass()`` waits at `gate` until it opens.
    func arm(_ gate: AsyncGate) { armed.withLock { $0 = gate } }

    /// Waits at the armed gate (once), or goes through.
    func pass() async {
        let held = armed.withLock { armed -> AsyncGate? in
            defer { armed = nil }
            return armed
        }
        await held?.pass()
    }
}
