import Foundation

extension MediaStore {
    private static let sharedStores = Locked<[String: WeakStore]>([:])

    private struct WeakStore {
        weak var store: MediaStore?
    }

    /// The store this process has open for `directory`, or a newly opened
    /// one. Several parts of an app (or several `Storage` facades) can
    /// share one directory this way; the first opener's configuration
    /// stays in force.
    public static func shared(
        directory: URL, configuration: StoreConfiguration = StoreConfiguration()
    ) throws(StoreError) -> MediaStore {
        let path = directory.standardizedFileURL.resolvingSymlinksInPath().path
        let result = sharedStores.withLock { stores -> Result<MediaStore, StoreError> in
            if let store = stores[path]?.store { return .success(store) }
            do throws(StoreError) {
                let store = try MediaStore(directory: directory, configuration: configuration)
                stores = stores.filter { $0.value.store != nil }
                stores[path] = WeakStore(store: store)
                return .success(store)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
