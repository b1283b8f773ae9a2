import Foundation

/// Why opening a store started it empty, and where the old files went.
///
/// A read-write open that finds the store damaged, with no other process
/// using it, moves `data.mdb` and its lock file into a `damaged-…` folder
/// inside the store directory (kept for `cachetool verify --store`) and
/// creates an empty store instead, so that an app whose store was damaged
/// starts with an empty cache rather than failing or crashing on every
/// launch. See ``MediaStore/recovery``.
public struct StoreRecovery: Sendable, Equatable, CustomStringConvertible {
    /// What the checks found, in one sentence.
    public let reason: String
    /// The folder that now holds the damaged `data.mdb` (and a `reason.txt`).
    public let damagedCopy: URL
    /// How many sessions in a row had ended without closing the store
    /// before this open (0 when the damage was found without a crash:
    /// the meta pages are checked at every open).
    public let uncleanSessions: Int
    /// Older damaged copies removed to keep at most
    /// ``MediaStore/keptDamagedCopies`` of them.
    public let removedCopies: [URL]

    public var description: String {
        "the store was damaged (\(reason)) and was started empty; the damaged files are in \(damagedCopy.path)"
    }
}
