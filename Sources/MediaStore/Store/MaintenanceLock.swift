import Foundation
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store's maintenance lock: `flock` on `.maintenance-lock` in the
/// store directory.
///
/// Every read-write ``MediaStore``, and every read-only one of an existing
/// store, holds it shared from before LMDB opens until the store is
/// closed or released. ``StoreSession`` probes it to learn whether other
/// processes have the store open. Maintenance that replaces
/// `data.mdb` (``MediaStore/compact(directory:)``) takes it exclusively
/// without waiting, so it fails while any process has the store open,
/// and stores opened meanwhile wait until it is done.
///
/// `flock` locks belong to the open file description, so they do not
/// interfere with LMDB's own POSIX record locks on `data.mdb-lock`.
// Unchecked: immutable (a file descriptor); `flock` itself is thread-safe.
final class MaintenanceLock: @unchecked Sendable {
    /// The lock file's name in the store directory (a dot file, so that
    /// the foreign-file check ignores it).
    static let fileName = ".maintenance-lock"

    private let descriptor = Locked<Int32>(-1)

    /// Whether it is held exclusively for as long as it is held (``sole(directory:create:)``).
    private let isExclusive: Bool

    private init(descriptor: Int32, isExclusive: Bool = false) {
        self.isExclusive = isExclusive
        self.descriptor.withLock { $0 = descriptor }
    }

    deinit {
        release()
    }

    /// Drops the lock now (``MediaStore/close()``); safe to call twice.
    func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    /// Runs `body` while this lock (held shared) is held exclusively, when
    /// that can be had at once: no other store in any process holds it.
    /// Returns `nil` without running `body` otherwise. Back to shared
    /// afterwards (`flock` converts a lock by dropping it first, so an
    /// attempt that fails waits to take it shared again).
    func whileExclusive<R>(_ body: () throws -> R) rethrows -> R? {
        try descriptor.withLock { descriptor -> R? in
            guard descriptor >= 0 else { return nil }
            if isExclusive { return try body() }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                while flock(descriptor, LOCK_SH) != 0 && errno == EINTR {}
                return nil
            }
            defer { while flock(descriptor, LOCK_SH) != 0 && errno == EINTR {} }
            return try body()
        }
    }

    /// Takes the lock shared, waiting while maintenance runs. Returns
    /// `nil` (no lock) when the directory holds no `data.mdb` yet (unless
    /// `evenWithoutStore`: a read-write open that creates the store), or
    /// the lock file cannot be opened: nothing can be compacted then.
    static func shared(directory: URL, evenWithoutStore: Bool = false) -> MaintenanceLock? {
        guard
            evenWithoutStore
                || FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path),
            let descriptor = openFile(directory)
        else { return nil }
        while flock(descriptor, LOCK_SH) != 0 {
            if errno != EINTR {
                close(descriptor)
                return nil
            }
        }
        return MaintenanceLock(descriptor: descriptor)
    }

    /// Takes the lock exclusively without waiting; `nil` when another
    /// store (in any process, this one included) holds it.
    static func exclusive(directory: URL) -> MaintenanceLock? {
        guard let descriptor = openFile(directory) else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        return MaintenanceLock(descriptor: descriptor)
    }

    /// Takes the lock exclusively without waiting, for a store opened
    /// with `MDB_NOLOCK` (``ProcessLocalLocks``), which must be the only
    /// one open in any process. For a new store (no `data.mdb`) it locks
    /// only if `create`, creating the directory when missing (the lock
    /// comes before LMDB opens), and never in a directory of other files:
    /// it returns `nil` then and leaves the error to the opener.
    ///
    /// - throws: ``StoreError/alreadyOpen(path:)`` while another store
    ///   (or maintenance) holds the lock.
    static func sole(directory: URL, create: Bool) throws(StoreError) -> MaintenanceLock? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard create else { return nil }
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } else if !isDirectory.boolValue {
            return nil
        } else if !FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            let foreign = contents.contains { !$0.hasPrefix(".") && $0 != StoreOpener.lockFileName }
            guard create && !foreign else { return nil }
        }
        guard let descriptor = openFile(directory) else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw .alreadyOpen(path: directory.path)
        }
        return MaintenanceLock(descriptor: descriptor, isExclusive: true)
    }

    private static func openFile(_ directory: URL) -> Int32? {
        let path = directory.appendingPathComponent(fileName).path
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if descriptor < 0 { descriptor = open(path, O_RDONLY | O_CLOEXEC) }
        return descriptor >= 0 ? descriptor : nil
    }
}
