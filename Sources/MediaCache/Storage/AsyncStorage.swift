import Dispatch
import Foundation

/// The asynchronous API over a ``HybridStorage``: completion handlers
/// (`Result`) and `async throws` overloads.
///
/// Operations run in the storage's one serialization domain, in the order
/// they were called, interleaved safely with ``SyncStorage`` calls.
/// Completion handlers run in that order too, on a private serial queue
/// outside the domain, so they may call the sync API freely. An operation
/// keeps its storage alive until it has run.
public final class AsyncStorage<Key: Hashable, Value> {
    /// The storage it forwards to.
    public let innerStorage: HybridStorage<Key, Value>
    /// The queue operations are scheduled on (the domain's queue by default).
    public let serialQueue: DispatchQueue

    /// Wraps `storage`.
    public init(storage: HybridStorage<Key, Value>, serialQueue: DispatchQueue) {
        self.innerStorage = storage
        self.serialQueue = serialQueue
    }

    /// Runs `operation` in the domain, then hands its result to `completion`
    /// (on the completion queue, or in the domain when `direct`).
    private func run<T>(
        direct: Bool = false, _ operation: @escaping (HybridStorage<Key, Value>) throws -> T,
        completion: @escaping (Result<T, Error>) -> Void
    ) {
        let storage = innerStorage
        let job = UncheckedSendable<() -> Void> {
            let result = Result { try storage.domain.sync { try operation(storage) } }
            if direct {
                completion(result)
            } else {
                let delivery = UncheckedSendable<() -> Void> { completion(result) }
                storage.domain.completionQueue.async { delivery.value() }
            }
        }
        serialQueue.async { job.value() }
    }

    /// Awaits `operation` run in the domain.
    private func perform<T>(_ operation: @escaping (HybridStorage<Key, Value>) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<UncheckedSendable<T>, Error>) in
            run(direct: true, operation) { result in
                continuation.resume(with: result.map { UncheckedSendable($0) })
            }
        }.value
    }

    /// A view for values of another type, in the same domain.
    public func transform<U>(transformer: Transformer<U>) -> AsyncStorage<Key, U> {
        AsyncStorage<Key, U>(storage: innerStorage.transform(transformer: transformer), serialQueue: serialQueue)
    }
}

// MARK: - Completion handlers

extension AsyncStorage {
    /// Reads the entry for `key`, also when expired; `.failure(StorageError.notFound)` when missing.
    public func entry(forKey key: Key, completion: @escaping (Result<Entry<Value>, Error>) -> Void) {
        run({ try $0.entry(forKey: key) }, completion: completion)
    }

    /// Reads the unexpired object for `key`; `.failure(StorageError.notFound)` when missing or expired.
    public func object(forKey key: Key, completion: @escaping (Result<Value, Error>) -> Void) {
        run({ try $0.object(forKey: key) }, completion: completion)
    }

    /// Writes `object` for `key`.
    public func setObject(
        _ object: Value, forKey key: Key, expiry: Expiry? = nil, completion: @escaping (Result<(), Error>) -> Void
    ) {
        run({ try $0.setObject(object, forKey: key, expiry: expiry) }, completion: completion)
    }

    /// Removes the object for `key`; a missing key is not an error.
    public func removeObject(forKey key: Key, completion: @escaping (Result<(), Error>) -> Void) {
        run({ try $0.removeObject(forKey: key) }, completion: completion)
    }

    /// Removes every object.
    public func removeAll(completion: @escaping (Result<(), Error>) -> Void) {
        run({ try $0.removeAll() }, completion: completion)
    }

    /// Removes expired objects.
    public func removeExpiredObjects(completion: @escaping (Result<(), Error>) -> Void) {
        run({ try $0.removeExpiredObjects() }, completion: completion)
    }

    /// Whether an unexpired object exists for `key`: `.success(false)` when
    /// not (upstream fails instead).
    public func objectExists(forKey key: Key, completion: @escaping (Result<Bool, Error>) -> Void) {
        run({ $0.objectExists(forKey: key) }, completion: completion)
    }

    /// Whether an unexpired object exists for `key`.
    @available(*, deprecated, renamed: "objectExists(forKey:completion:)")
    public func existsObject(forKey key: Key, completion: @escaping (Result<Bool, Error>) -> Void) {
        objectExists(forKey: key, completion: completion)
    }
}

// MARK: - Swift concurrency

extension AsyncStorage {
    /// The entry for `key`, also when expired.
    /// - throws: ``StorageError/notFound`` when missing.
    public func entry(forKey key: Key) async throws -> Entry<Value> {
        try await perform { try $0.entry(forKey: key) }
    }

    /// The unexpired object for `key`.
    /// - throws: ``StorageError/notFound`` when missing or expired.
    public func object(forKey key: Key) async throws -> Value {
        try await perform { try $0.object(forKey: key) }
    }

    /// Writes `object` for `key`.
    public func setObject(_ object: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await perform { try $0.setObject(object, forKey: key, expiry: expiry) }
    }

    /// Removes the object for `key`; a missing key is not an error.
    public func removeObject(forKey key: Key) async throws {
        try await perform { try $0.removeObject(forKey: key) }
    }

    /// Removes every object.
    public func removeAll() async throws {
        try await perform { try $0.removeAll() }
    }

    /// Removes expired objects.
    public func removeExpiredObjects() async throws {
        try await perform { try $0.removeExpiredObjects() }
    }

    /// Whether an unexpired object exists for `key`.
    public func objectExists(forKey key: Key) async throws -> Bool {
        try await perform { $0.objectExists(forKey: key) }
    }
}

// Forwards to a ``HybridStorage``, whose state is only touched inside its serialization domain; keys and values cross threads.
extension AsyncStorage: @unchecked Sendable where Key: Sendable, Value: Sendable {}
