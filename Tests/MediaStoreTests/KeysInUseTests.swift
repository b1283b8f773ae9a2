import Foundation
import Testing

@testable import MediaStore

/// Keys in use are kept from eviction by their bytes, as the store
/// compares keys: "café" in one scalar and with a combining accent are
/// two entries, and marking one does not mark (or unmark) the other.
@Suite struct KeysInUseTests {
    @Test func canonicallyEquivalentKeysAreMarkedApart() throws {
        let t = try TestStore()
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        t.store.markInUse(composed)
        #expect(t.store.keysInUse.withLock { $0[ExactKey(decomposed)] } == nil)
        t.store.unmarkInUse(decomposed)
        #expect(t.store.keysInUse.withLock { $0[ExactKey(composed)] } == 1)
        t.store.unmarkInUse(composed)
        #expect(t.store.keysInUse.withLock { $0.isEmpty })
    }
}
