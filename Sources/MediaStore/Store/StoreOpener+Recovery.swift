import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Recovery from a damaged store, for read-write opens.
///
/// Policy: the meta pages are checked at every open (cheap: a few reads):
/// against the file size (`StoreFormat.metaPageDamage(path:)`) and
/// against each other (`MetaPageCheck`: a damaged transaction id makes
/// LMDB open an older commit, and the first write would then overwrite
/// the newest one for good).
/// When the previous session ended without closing the store and no other
/// process has it open, the whole B-tree walk of ``StoreFileCheck`` runs
/// too, with plain reads, so it cannot fault whatever the damage; its cost
/// follows the size of the index, not of the cached bytes. A store that
/// fails either check, with no other process using it, is moved aside into
/// `damaged-<UTC time>` in the store directory and a new, empty store is
/// created; a store that passes is never moved.
///
/// Why not the walk after several unclean sessions only: a store damaged
/// so that LMDB faults would then crash the app once per session until
/// the count is reached; the walk is cheap enough to run after the first.
/// Why not in a child process (as `cachetool verify` does): forking a
/// multithreaded app and running Swift in the child is unsafe, and iOS
/// apps cannot fork; the plain-read walk needs no protection.
extension StoreOpener {
    /// Folder names of damaged copies in a store directory.
    static let damagedCopyPrefix = "damaged-"

    /// What opening learnt from the session marker before LMDB opened.
    struct StartedSession {
        /// The marker, locked until the open has recorded itself (`nil`
        /// when the directory cannot hold one).
        let session: StoreSession?
        /// The marker as this open found it (written back if opening fails).
        let previous: StoreSession.Record
        let uncleanSessions: Int
        let recovery: StoreRecovery?
    }

    /// Reads the session marker and runs the checks the policy calls for;
    /// moves a damaged store aside; marks the session open. Leaves the
    /// marker locked (the caller unlocks it once the store is open, or
    /// writes ``StartedSession/previous`` back if opening fails).
    func startSession() throws(StoreError) -> StartedSession {
        try prepareDirectory(directory.path)
        guard let session = StoreSession.lock(directory: directory) else {
            return StartedSession(session: nil, previous: .closed, uncleanSessions: 0, recovery: nil)
        }
        let sole = session.isSoleOpener()
        let previous = session.read()
        let unclean = sole && previous.isOpen
        let uncleanSessions = unclean ? previous.uncleanSessions + 1 : (sole ? 0 : previous.uncleanSessions)
        let dataPath = directory.appendingPathComponent("data.mdb").path
        var recovery: StoreRecovery?
        if sole, let damage = Self.damage(dataPath: dataPath, walk: unclean) {
            recovery = try moveAside(reason: damage, uncleanSessions: uncleanSessions)
        }
        // Marked open before LMDB reads a page: opening itself reads the
        // main database, and a damaged one can fault right there.
        session.write(StoreSession.Record(isOpen: true, uncleanSessions: uncleanSessions))
        return StartedSession(
            session: session, previous: previous, uncleanSessions: uncleanSessions, recovery: recovery)
    }

    /// Damage the checks find in an existing LMDB file; `nil` for a good,
    /// missing, empty or foreign file (opening reports those).
    static func damage(dataPath: String, walk: Bool) -> String? {
        let size = (try? FileManager.default.attributesOfItem(atPath: dataPath))?[.size] as? Int
        guard (size ?? 0) > 0, StoreFormat.looksLikeLMDB(path: dataPath) else { return nil }
        if let damage = StoreFormat.metaPageDamage(path: dataPath) ?? MetaPageCheck.damage(path: dataPath) {
            return damage
        }
        return walk ? StoreFileCheck.damage(path: dataPath) : nil
    }

    /// The names of the damaged copies in `directory`, oldest first.
    package static func damagedCopies(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasPrefix(damagedCopyPrefix) }.sorted()
    }

    /// Moves `data.mdb` and LMDB's lock file into a new damaged copy,
    /// with a `reason.txt`, and drops the oldest copies beyond
    /// ``MediaStore/keptDamagedCopies``.
    private func moveAside(reason: String, uncleanSessions: Int) throws(StoreError) -> StoreRecovery {
        let manager = FileManager.default
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss.SSS'Z'"
        let stamp = formatter.string(from: Date())
        // Names sort in the order the copies were made (the oldest go first):
        // a name not after every existing one gets a "+" more than the last.
        let existing = Self.damagedCopies(in: directory)
        var name = Self.damagedCopyPrefix + stamp
        if let last = existing.last, name <= last { name = last + "+" }
        let copy = directory.appendingPathComponent(name, isDirectory: true)
        do {
            try manager.createDirectory(at: copy, withIntermediateDirectories: false)
            try manager.moveItem(
                at: directory.appendingPathComponent("data.mdb"), to: copy.appendingPathComponent("data.mdb"))
            let lock = directory.appendingPathComponent(Self.lockFileName)
            if manager.fileExists(atPath: lock.path) {
                try manager.moveItem(at: lock, to: copy.appendingPathComponent(Self.lockFileName))
            }
        } catch {
            throw .damagedStore(
                reason: "\(reason); moving it aside to \(copy.path) failed: \(error.localizedDescription)")
        }
        let note =
            "MediaStore found this store damaged and started an empty one.\n"
            + "reason: \(reason)\nunclean sessions before: \(uncleanSessions)\n"
            + "moved: \(stamp)\ncheck it: cachetool verify --store \(copy.path)\n"
        _ = manager.createFile(atPath: copy.appendingPathComponent("reason.txt").path, contents: Data(note.utf8))
        let copies = Self.damagedCopies(in: directory)
        var removed: [URL] = []
        for old in copies.dropLast(MediaStore.keptDamagedCopies) where old != name {
            let old = directory.appendingPathComponent(old, isDirectory: true)
            if (try? manager.removeItem(at: old)) != nil { removed.append(old) }
        }
        return StoreRecovery(
            reason: reason, damagedCopy: copy, uncleanSessions: uncleanSessions, removedCopies: removed)
    }
}

extension MediaStore {
    /// How many damaged copies a store directory keeps: moving a new one
    /// aside removes the oldest beyond this many, so that a disk that
    /// keeps damaging stores cannot fill up with copies.
    public static let keptDamagedCopies = 3
}
