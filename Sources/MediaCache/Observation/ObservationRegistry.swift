import Foundation

/// Something that storage observers can watch.
public protocol StorageObservationRegistry {
    associatedtype S: StorageAware

    /// Registers `observer` (held weakly) for every change of the storage.
    @discardableResult
    func addStorageObserver<O: AnyObject>(
        _ observer: O, closure: @escaping (O, S, StorageChange<S.Key>) -> Void
    ) -> ObservationToken

    /// Removes every storage observer.
    func removeAllStorageObservers()
}

/// Something whose keys can be watched one by one.
public protocol KeyObservationRegistry {
    associatedtype S: StorageAware

    /// Registers `observer` (held weakly) for changes of `key`.
    @discardableResult
    func addObserver<O: AnyObject>(
        _ observer: O, forKey key: S.Key, closure: @escaping (O, S, KeyChange<S.Value>) -> Void
    ) -> ObservationToken

    /// Removes the observers of `key`.
    func removeObserver(forKey key: S.Key)

    /// Removes every key observer.
    func removeAllKeyObservers()
}
