import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Maintenance for tools such as `cachetool`: reader slots, chunk
/// sharing, and compaction (which replaces `data.mdb`).
extension MediaStore {
    /// The slots of LMDB's reader table in use (`mdb_reader_list`), each
    /// marked stale when its process is gone.
    public func readers() -> [ReaderSlot] {
        environment.readerList().map { entry in
            let alive = kill(entry.pid, 0) == 0 || errno == EPERM
            return ReaderSlot(pid: entry.pid, thread: entry.thread, transactionID: entry.transactionID, isStale: !alive)
        }
    }

    /// Clears the reader slots of dead processes (`mdb_reader_check`);
    /// returns how many. Safe while other processes read and write, and
    /// allowed on a read-only store (it only touches the lock file).
    @discardableResult
    public func clearStaleReaders() -> Int {
        environment.clearStaleReaders()
    }

    /// Which other entries share chunks with the entry for `key`; `nil`
    /// when there is none. Scans the whole index in one read transaction.
    public func chunkSharing(forKey key: String) throws(StoreError) -> ChunkSharing? {
        try run {
            try read { transaction -> ChunkSharing? in
                guard let (_, record) = try transaction.index.find(key) else { return nil }
                guard !record.isUnchunked else {
                    return ChunkSharing(chunkCount: 0, sharedChunkCount: 0, sharingKeys: [])
                }
                let own = Set(try transaction.extents.rows(entryID: record.entryID).map(\.row.chunk))
                var shared = Set<Slot>()
                for chunk in own where try transaction.chunks.referenceCount(chunk) > 1 { shared.insert(chunk) }
                var keys: [String] = []
                if !shared.isEmpty {
                    for (_, other) in try transaction.index.allRecords()
                    where other.entryID != record.entryID && !other.isUnchunked {
                        if try transaction.extents.rows(entryID: other.entryID).contains(where: {
                            shared.contains($0.row.chunk)
                        }) {
                            keys.append(other.key)
                        }
                    }
                }
                return ChunkSharing(chunkCount: own.count, sharedChunkCount: shared.count, sharingKeys: keys.sorted())
            }
        }
    }

    /// Rewrites the store in `directory` compactly: LMDB's copy with
    /// `MDB_CP_COMPACT` (free pages dropped, pages renumbered) into a
    /// temporary file beside `data.mdb`, which then replaces it by rename.
    ///
    /// Refuses (``AdministrationError/storeInUse(path:pid:)``) while any
    /// store, in this process or another, has the directory open: it
    /// takes the maintenance lock exclusively, and also checks LMDB's own
    /// lock for processes that do not use this library. Stores opened
    /// while it runs wait for it. If `data.mdb` changed during the copy
    /// nothing is replaced. An LMDB environment must never be swapped
    /// under an open one, so these checks are what make the swap safe.
    public static func compact(directory: URL) throws(AdministrationError) -> CompactionReport {
        let path = directory.path
        let dataPath = directory.appendingPathComponent("data.mdb").path
        guard FileManager.default.fileExists(atPath: dataPath) else {
            throw .store(.notAStore(path: path, reason: "no data.mdb in the directory"))
        }
        guard let lock = MaintenanceLock.exclusive(directory: directory) else {
            throw .storeInUse(path: path, pid: nil)
        }
        defer { withExtendedLifetime(lock) {} }
        let lmdbLock = directory.appendingPathComponent(StoreOpener.lockFileName).path
        if let pid = LMDBEnvironment.openLockHolder(lockFile: lmdbLock) { throw .storeInUse(path: path, pid: pid) }

        let before = try fileIdentity(dataPath)
        let copyPath = directory.appendingPathComponent(".compact-\(getpid()).mdb").path
        unlink(copyPath)
        do {
            // The copy moves the bytes as they are: an encrypted store needs no key.
            var opener = StoreOpener(directory: directory, configuration: StoreConfiguration(), readOnly: true)
            opener.skipsKeyCheck = true
            let opened = try opener.open()
            try opened.environment.copyCompacted(to: copyPath)
        } catch let error as StoreError {
            unlink(copyPath)
            throw .store(error)
        } catch let error as LMDBError {
            unlink(copyPath)
            throw .store(StoreError(error))
        } catch {
            unlink(copyPath)
            throw .io(path: copyPath, reason: String(describing: error))
        }
        // The environment is closed again: check nobody opened it meanwhile.
        if let pid = LMDBEnvironment.openLockHolder(lockFile: lmdbLock) {
            unlink(copyPath)
            throw .storeInUse(path: path, pid: pid)
        }
        guard try fileIdentity(dataPath) == before else {
            unlink(copyPath)
            throw .changedDuringCompaction(path: path)
        }
        let copy = open(copyPath, O_RDONLY | O_CLOEXEC)
        if copy >= 0 {
            fsync(copy)
            closeFileDescriptor(copy)
        }
        guard rename(copyPath, dataPath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(copyPath)
            throw .io(path: dataPath, reason: "cannot replace it: \(reason)")
        }
        let directoryHandle = open(path, O_RDONLY | O_CLOEXEC)
        if directoryHandle >= 0 {
            fsync(directoryHandle)
            closeFileDescriptor(directoryHandle)
        }
        let after = try fileIdentity(dataPath)
        return CompactionReport(bytesBefore: before.size, bytesAfter: after.size)
    }

    private struct FileIdentity: Equatable {
        var inode: UInt64
        var size: Int
        var seconds: Int
        var nanoseconds: Int
    }

    private static func fileIdentity(_ path: String) throws(AdministrationError) -> FileIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .io(path: path, reason: String(cString: strerror(errno))) }
        #if canImport(Darwin)
            let modified = info.st_mtimespec
        #else
            let modified = info.st_mtim
        #endif
        return FileIdentity(
            inode: UInt64(info.st_ino), size: Int(info.st_size), seconds: Int(modified.tv_sec),
            nanoseconds: Int(modified.tv_nsec))
    }
}
