import Foundation
import MediaStore

/// Fans a store's removal reports out to every facade on that store.
///
/// A ``MediaStore`` has one removal handler, but several storages (and
/// their transformed views) can share one store through
/// `MediaStore.shared(directory:configuration:)`. The router installs the
/// handler once per store and calls each subscriber with every report.
/// Installing it replaces a handler set on the store by other code.
enum StoreRemovalRouter {
    /// The subscribers of one store.
    private struct Route {
        weak var store: MediaStore?
        var listeners: [UInt64: @Sendable ([StoreRemoval]) -> Void] = [:]
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var routes: [ObjectIdentifier: Route] = [:]
    nonisolated(unsafe) private static var nextID: UInt64 = 0

    /// Calls `listener` with the entries `store` removes by itself (evicted
    /// by a limit, swept as expired), after each commit, on the writing
    /// thread, until the returned subscription is released.
    ///
    /// `listener` must not block on anything that may wait for the store's
    /// writer: it runs while the writer holds the store's write lock.
    static func subscribe(
        to store: MediaStore, _ listener: @escaping @Sendable ([StoreRemoval]) -> Void
    ) -> Subscription {
        let key = ObjectIdentifier(store)
        lock.lock()
        defer { lock.unlock() }
        nextID += 1
        let id = nextID
        // A route whose store is gone belongs to an old store at a reused address.
        if routes[key]?.store !== store {
            routes[key] = Route(store: store)
            store.setRemovalHandler { removals in deliver(removals, from: key) }
        }
        routes[key]?.listeners[id] = listener
        return Subscription(store: key, id: id)
    }

    /// How many subscriptions `store` has (tests).
    static func subscriberCount(of store: MediaStore) -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard let route = routes[ObjectIdentifier(store)], route.store === store else { return 0 }
        return route.listeners.count
    }

    private static func deliver(_ removals: [StoreRemoval], from store: ObjectIdentifier) {
        lock.lock()
        let listeners = routes[store].map { Array($0.listeners.values) } ?? []
        lock.unlock()
        for listener in listeners { listener(removals) }
    }

    fileprivate static func unsubscribe(store key: ObjectIdentifier, id: UInt64) {
        lock.lock()
        defer { lock.unlock() }
        guard var route = routes[key] else { return }
        route.listeners[id] = nil
        if route.listeners.isEmpty {
            routes[key] = nil
            route.store?.setRemovalHandler(nil)
        } else {
            routes[key] = route
        }
    }

    /// Ends its subscription when released.
    final class Subscription: Sendable {
        private let store: ObjectIdentifier
        private let id: UInt64

        fileprivate init(store: ObjectIdentifier, id: UInt64) {
            self.store = store
            self.id = id
        }

        deinit {
            StoreRemovalRouter.unsubscribe(store: store, id: id)
        }
    }
}
