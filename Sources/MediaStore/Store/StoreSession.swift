import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The session marker: `.session` beside `data.mdb`, a few lines of text
/// saying whether the store is open and how many sessions in a row ended
/// without ``MediaStore/close()`` (or the store's release).
///
/// A read-write open marks it open; the last process to close marks it
/// closed. A process that dies with the store open (SIGKILL, a fault,
/// `exit` without releasing the store) leaves it marked open, so the next
/// open knows the previous session ended uncleanly. The marker lives in
/// its own file, never in `data.mdb`, whose pages are what may be damaged.
///
/// Whether other processes have the store open comes from the
/// maintenance lock, which every open store holds shared: when it can be
/// taken exclusively, nobody else has the store open, and an open marker
/// is a dead session's. The file's own `flock`, held exclusively only
/// while an open or a close reads and writes the marker, orders the
/// processes that open and close at once.
///
/// The marker is written without `fsync`: it guards against process
/// deaths, whose writes the kernel keeps. A marker lost to a power cut
/// only skips a check that a power cut does not call for (LMDB's commits
/// survive it).
package final class StoreSession: @unchecked Sendable {
    package static let fileName = ".session"

    /// What the marker says.
    struct Record: Equatable, Sendable {
        /// The store is (or was, when its process died) open.
        var isOpen: Bool
        /// Consecutive sessions that ended without closing the store.
        var uncleanSessions: Int

        static let closed = Record(isOpen: false, uncleanSessions: 0)

        /// Parses the marker; `nil` for text that is not one.
        init?(text: String) {
            var fields: [Substring: Substring] = [:]
            for line in text.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                fields[line[..<equals]] = line[line.index(after: equals)...]
            }
            guard let state = fields["state"], state == "open" || state == "closed",
                let unclean = fields["unclean"].flatMap({ Int($0) }), unclean >= 0
            else { return nil }
            self.init(isOpen: state == "open", uncleanSessions: unclean)
        }

        init(isOpen: Bool, uncleanSessions: Int) {
            self.isOpen = isOpen
            self.uncleanSessions = uncleanSessions
        }

        func text(pid: Int32) -> String {
            "MediaStore session\nstate=\(isOpen ? "open" : "closed")\nunclean=\(uncleanSessions)\npid=\(pid)\n"
        }
    }

    private let directory: URL
    private let descriptor: Int32
    /// Whether ``lock(directory:)`` created the file (so that an open
    /// that fails, such as of a foreign directory, leaves no marker).
    let created: Bool

    private init(directory: URL, descriptor: Int32, created: Bool) {
        self.directory = directory
        self.descriptor = descriptor
        self.created = created
    }

    deinit {
        close(descriptor)
    }

    /// Opens the marker and takes its `flock` exclusively (waiting while
    /// another process opens or closes the store). `nil` when the file
    /// cannot be created (a directory this process cannot write).
    static func lock(directory: URL) -> StoreSession? {
        let path = directory.appendingPathComponent(fileName).path
        var created = true
        var descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == EEXIST {
            created = false
            descriptor = open(path, O_RDWR | O_CLOEXEC)
        }
        guard descriptor >= 0 else { return nil }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno != EINTR {
                close(descriptor)
                return nil
            }
        }
        return StoreSession(directory: directory, descriptor: descriptor, created: created)
    }

    /// Lets other processes open and close the store again.
    func unlock() {
        _ = flock(descriptor, LOCK_UN)
    }

    /// Takes the lock again for a close.
    func relock() {
        while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
    }

    /// The marker as found: closed when it is missing or empty (a store
    /// older than the marker, or a new one), open when it holds anything
    /// else unreadable (a marker torn by a crash counts as a crash).
    func read() -> Record {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return .closed }
        return Record(text: String(decoding: buffer.prefix(count), as: UTF8.self))
            ?? Record(isOpen: true, uncleanSessions: 0)
    }

    /// Removes a marker this open created, or puts `previous` back.
    func restore(_ previous: Record) {
        if created {
            unlink(directory.appendingPathComponent(Self.fileName).path)
        } else {
            write(previous)
        }
    }

    /// Replaces the marker.
    func write(_ record: Record) {
        let bytes = Array(record.text(pid: getpid()).utf8)
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        if written == bytes.count { _ = ftruncate(descriptor, off_t(bytes.count)) }
    }

    /// Whether no other process has the store open: the maintenance lock
    /// can be taken exclusively. Call it while this process holds no
    /// maintenance lock on the store itself (`flock` locks of two open
    /// files conflict even within one process).
    ///
    /// Tries seven times, waiting 1, 2, 4 … 32 ms between tries (63 ms in
    /// all, only when another opener seems to be there): a child process
    /// this app starts holds copies of its descriptors, and so its
    /// `flock`s, until it calls `exec`, which on a loaded machine has taken
    /// more than 3 ms and made a store just closed look still open (its
    /// next open then counted an unclean session).
    func isSoleOpener() -> Bool {
        for attempt in 0..<7 {
            if attempt > 0 { usleep(1000 << (attempt - 1)) }
            if let probe = MaintenanceLock.exclusive(directory: directory) {
                withExtendedLifetime(probe) {}
                return true
            }
        }
        return false
    }
}
