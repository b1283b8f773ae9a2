import Foundation
import MediaSupport

extension MediaStore {
    private static let sharedStores = Locked<[String: WeakStore]>([:])

    private struct WeakStore {
        weak var store: MediaStore?
    }

    /// The store this process has open for `directory`, or a newly opened
    /// one. Several parts of an app (or several `Storage` facades) can
    /// share one directory this way; the first opener's configuration
    /// stays in force, except its key: a caller whose
    /// ``StoreConfiguration/encryption`` does not match the open store's
    /// gets ``StoreError/wrongKey(path:)`` or
    /// ``StoreError/encryptionMismatch(path:storeIsEncrypted:)``, as
    /// opening would. After ``close()`` the directory's next caller gets a
    /// newly opened store.
    public static func shared(
        directory: URL, configuration: StoreConfiguration = StoreConfiguration()
    ) throws(StoreError) -> MediaStore {
        let path = directory.standardizedFileURL.resolvingSymlinksInPath().path
        let result = sharedStores.withLock { stores -> Result<MediaStore, StoreError> in
            // A closed store is forgotten: the next caller opens a new one.
            if let store = stores[path]?.store, !store.isClosed {
                let given = configuration.encryption?.key
                // The store's keys now: a rekey may have changed them since it was opened.
                switch (store.encryption, given) {
                case (nil, nil): return .success(store)
                case (let own?, let given?):
                    return own.accepts(given) ? .success(store) : .failure(.wrongKey(path: directory.path))
                case (let own, _):
                    return .failure(.encryptionMismatch(path: directory.path, storeIsEncrypted: own != nil))
                }
            }
            do throws(StoreError) {
                let store = try MediaStore(directory: directory, configuration: configuration)
                stores = stores.filter { $0.value.store.map { !$0.isClosed } ?? false }
                stores[path] = WeakStore(store: store)
                return .success(store)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
