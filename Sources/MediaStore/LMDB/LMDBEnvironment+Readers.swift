internal import CLMDB
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One line of LMDB's reader table (`mdb_reader_list`).
struct LMDBReaderEntry: Equatable {
    /// The process holding the slot.
    var pid: Int32
    /// The thread (or, with `MDB_NOTLS`, the transaction) identifier, in hex.
    var thread: String
    /// The snapshot the reader holds, or `nil` for an idle slot.
    var transactionID: UInt64?
}

extension LMDBEnvironment {
    /// The active reader slots, as `mdb_stat -r` prints them.
    func readerList() -> [LMDBReaderEntry] {
        mapLock.lockShared()
        defer { mapLock.unlockShared() }
        guard !isClosed else { return [] }
        final class Lines { var text = "" }
        let lines = Lines()
        let context = Unmanaged.passUnretained(lines).toOpaque()
        _ = mdb_reader_list(
            handle,
            { message, context in
                guard let message, let context else { return 0 }
                Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().text += String(cString: message)
                return 0
            }, context)
        return Self.parseReaderList(lines.text)
    }

    /// Parses `mdb_reader_list` output: a header line, then
    /// `pid thread txnid` per slot (`-` for an idle slot).
    static func parseReaderList(_ text: String) -> [LMDBReaderEntry] {
        text.split(separator: "\n").compactMap { line in
            let fields = line.split(whereSeparator: \.isWhitespace)
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return LMDBReaderEntry(pid: pid, thread: String(fields[1]), transactionID: UInt64(fields[2]))
        }
    }

    /// The process holding LMDB's open lock (byte 0 of the lock file,
    /// which every process with the environment open holds shared), or
    /// `nil` when no other process has the environment open.
    ///
    /// Uses `F_GETLK`, which ignores this process's own locks. Call it
    /// only while this process has no environment open on the file:
    /// closing the probe descriptor drops every POSIX lock this process
    /// holds on it (LMDB's documented caveat).
    static func openLockHolder(lockFile path: String) -> Int32? {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { closeFileDescriptor(fd) }
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        probe.l_start = 0
        probe.l_len = 1
        guard fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) else { return nil }
        return probe.l_pid
    }
}
