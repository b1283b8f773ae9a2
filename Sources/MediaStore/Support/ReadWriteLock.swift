#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `pthread_rwlock_t` owned by a class so that its address is stable.
// Unchecked: a pthread rwlock is made to be shared between threads.
final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { pthread_rwlock_rdlock(lock) }
    func unlockShared() { pthread_rwlock_unlock(lock) }
    func lockExclusive() { pthread_rwlock_wrlock(lock) }
    func unlockExclusive() { pthread_rwlock_unlock(lock) }
}
