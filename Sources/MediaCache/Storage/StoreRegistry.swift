import Foundation
import MediaStore

/// The stores open in this process, one per directory: LMDB allows a
/// single environment per file per process, so two storages on the same
/// folder share one ``MediaStore``.
final class StoreRegistry: @unchecked Sendable {
    static let shared = StoreRegistry()

    private struct WeakStore {
        weak var store: MediaStore?
    }

    private let lock = NSLock()
    private var stores: [String: WeakStore] = [:]

    /// The open store for `directory`, or a newly opened one. A store
    /// already open keeps the configuration it was opened with.
    func open(directory: URL, configuration: StoreConfiguration) throws(StoreError) -> MediaStore {
        let path = directory.standardizedFileURL.path
        lock.lock()
        defer { lock.unlock() }
        if let store = stores[path]?.store { return store }
        let store = try MediaStore(directory: directory, configuration: configuration)
        stores = stores.filter { $0.value.store != nil }
        stores[path] = WeakStore(store: store)
        return store
    }
}
