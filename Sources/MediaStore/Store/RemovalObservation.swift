/// Keeps a removal observer registered until cancelled or released.
/// Made by ``MediaStore/addRemovalObserver(_:)``.
public final class RemovalObservation: Sendable {
    private let id: UInt64
    private weak let store: MediaStore?

    init(store: MediaStore, id: UInt64) {
        self.store = store
        self.id = id
    }

    deinit {
        cancel()
    }

    /// Stops the observer; safe to call twice.
    public func cancel() {
        store?.removalObservers.withLock { _ = $0.observers.removeValue(forKey: id) }
    }
}

extension MediaStore {
    /// Calls `observer`, after each commit, with the entries the store
    /// removed by itself (evicted by a limit, or swept as expired) — not
    /// with explicit removals. Any number of observers may watch a store;
    /// each stays registered while the returned observation lives.
    ///
    /// `observer` runs on the writing thread while the store's writer lock
    /// is held: keep it short, and never wait in it for another write.
    public func addRemovalObserver(
        _ observer: @escaping @Sendable ([StoreRemoval]) -> Void
    ) -> RemovalObservation {
        let id = removalObservers.withLock { state -> UInt64 in
            state.nextID += 1
            state.observers[state.nextID] = observer
            return state.nextID
        }
        return RemovalObservation(store: self, id: id)
    }
}
