import MediaSupport

/// The chunk keys an encrypted store derived most recently, so that
/// reading a chunk again (a range read opens one or a few blocks) does not
/// run HKDF again: at most ``capacity`` keys of 32 bytes, the oldest
/// forgotten first.
///
/// It belongs to one ``StoreEncryption`` and so to one store key: it is
/// dropped with it (closing the store, or a rekey that makes a new one),
/// and a key it forgets is overwritten with zeros when no sealer
/// still holds it.
final class ChunkKeyCache: Sendable {
    /// Keys kept at most.
    let capacity: Int
    private let state: Locked<State>

    private struct State: Sendable {
        var keys: [ContentDigest: [UInt8]] = [:]
        /// Identities in the order they were added, oldest at `next`
        /// once the ring is full.
        var ring: [ContentDigest] = []
        var next = 0

        /// Drops the key of `identity`, overwriting its bytes with zeros
        /// when this was its last copy (a sealer still using the key keeps
        /// its own; Swift gives no way to scrub every copy, see
        /// ``StoreKey``).
        mutating func forget(_ identity: ContentDigest) {
            guard var key = keys.removeValue(forKey: identity) else { return }
            key.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        }
    }

    init(capacity: Int) {
        precondition(capacity > 0, "a key cache holds at least one key")
        self.capacity = capacity
        state = Locked(State())
    }

    deinit {
        state.withLock { state in
            for identity in state.ring { state.forget(identity) }
        }
    }

    /// The key of the chunk `identity`, derived by `derive` when it is not
    /// kept (outside the lock: two readers may both derive it once).
    func key(for identity: ContentDigest, derive: (ContentDigest) -> [UInt8]) -> [UInt8] {
        if let key = state.withLock({ $0.keys[identity] }) { return key }
        let key = derive(identity)
        state.withLock { state in
            guard state.keys[identity] == nil else { return }
            if state.ring.count < capacity {
                state.ring.append(identity)
            } else {
                state.forget(state.ring[state.next])
                state.ring[state.next] = identity
                state.next = (state.next + 1) % capacity
            }
            state.keys[identity] = key
        }
        return key
    }

    /// How many keys are kept.
    var count: Int { state.withLock { $0.keys.count } }
}
