import Foundation
import MediaSupport

/// The chunks one open ``MediaStore`` has verified, and where each sat in
/// the memory map when it was: a later read of the same chunk at the same
/// address and length skips hashing it again.
///
/// What is trusted, and for how long (MediaStore.docc/StoreFormat.md, "Integrity on reads"):
/// - a chunk whose stored bytes hashed to its digest, at the map address
///   and stored length they had, until this store instance closes, the
///   chunk is deleted by this process, or ``capacity`` newer chunks pushed
///   it out (oldest first);
/// - nothing else: a chunk that moved (rewritten, or the map grew and was
///   mapped elsewhere), a new store instance (another process, or this one
///   after ``MediaStore/close()``) and every ``MediaStore/verify()`` hash
///   the bytes again.
///
/// A byte changed in the file under an open store after the chunk's first
/// verified read is therefore served unnoticed by that store instance until
/// the chunk leaves this memory; it is caught by `verify()` and by the
/// first read of any other store instance.
final class VerifiedChunks: Sendable {
    /// Where a verified chunk was: its slot (digest and ordinal), address and stored length.
    struct Location: Hashable {
        var high: UInt64
        var low: UInt64
        var ordinal: UInt16
        var address: UInt
        var count: Int
    }

    private struct State {
        /// Slot → its verified location and blocks.
        var verified: [SlotKey: Known] = [:]
        /// Insertion order, for dropping the oldest when full.
        var order: [SlotKey] = []
        var next = 0
    }

    private struct SlotKey: Hashable {
        var high: UInt64
        var low: UInt64
        var ordinal: UInt16
    }

    /// Where a chunk was verified and which of its blocks (``BlockDigests``);
    /// `UInt64.max` for the whole chunk.
    private struct Known {
        var location: Location
        var blocks: UInt64
    }

    /// Most chunks remembered; `0` remembers none (every read hashes).
    let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// Whether the whole `payload` of the chunk at `slot` was verified where it is now.
    func contains(slot: Slot, digest: ContentDigest, payload: UnsafeRawBufferPointer) -> Bool {
        verifiedBlocks(slot: slot, digest: digest, payload: payload) == .max
    }

    /// The blocks of the chunk at `slot` verified where `payload` is now:
    /// `UInt64.max` for the whole chunk, 0 for none.
    func verifiedBlocks(slot: Slot, digest: ContentDigest, payload: UnsafeRawBufferPointer) -> UInt64 {
        guard capacity > 0 else { return 0 }
        let location = Self.location(slot: slot, digest: digest, payload: payload)
        let key = SlotKey(high: location.high, low: location.low, ordinal: location.ordinal)
        return state.withLock { state in
            guard let known = state.verified[key], known.location == location else { return 0 }
            return known.blocks
        }
    }

    /// Remembers that `payload` of the chunk at `slot` hashed to its digest
    /// (`blocks` `UInt64.max`), or that the blocks `blocks` of it hashed to
    /// their block digests; blocks remembered before at the same place are
    /// kept, and once they make up `all` the whole chunk counts as verified.
    func insert(
        slot: Slot, digest: ContentDigest, payload: UnsafeRawBufferPointer, blocks: UInt64 = .max,
        of all: UInt64 = .max
    ) {
        guard capacity > 0 else { return }
        let location = Self.location(slot: slot, digest: digest, payload: payload)
        let key = SlotKey(high: location.high, low: location.low, ordinal: location.ordinal)
        state.withLock { state in
            var known = Known(location: location, blocks: blocks)
            let previous = state.verified[key]
            if let previous, previous.location == location { known.blocks |= previous.blocks }
            if known.blocks & all == all { known.blocks = .max }
            state.verified[key] = known
            if previous != nil { return }
            if state.order.count < capacity {
                state.order.append(key)
                return
            }
            let oldest = state.order[state.next]
            if oldest != key { state.verified[oldest] = nil }
            state.order[state.next] = key
            state.next = (state.next + 1) % capacity
        }
    }

    /// Forgets the chunk at `slot` (it is being deleted).
    func forget(slot: Slot) {
        guard capacity > 0 else { return }
        let digest = slot.digest
        let key = SlotKey(high: digest.high, low: digest.low, ordinal: slot.ordinal)
        _ = state.withLock { $0.verified.removeValue(forKey: key) }
    }

    /// How many chunks are remembered (tests).
    var count: Int { state.withLock { $0.verified.count } }

    private static func location(slot: Slot, digest: ContentDigest, payload: UnsafeRawBufferPointer) -> Location {
        Location(
            high: digest.high, low: digest.low, ordinal: slot.ordinal,
            address: UInt(bitPattern: payload.baseAddress), count: payload.count)
    }
}
