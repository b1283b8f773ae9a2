/// Errors of store maintenance that replaces files (compaction).
public enum AdministrationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Another store (in this or another process) has the directory open;
    /// `pid` names a process holding LMDB's lock when it is known.
    case storeInUse(path: String, pid: Int32?)
    /// `data.mdb` changed while the copy was made; nothing was replaced.
    case changedDuringCompaction(path: String)
    /// The store could not be opened or copied.
    case store(StoreError)
    /// A file operation failed.
    case io(path: String, reason: String)

    public var description: String {
        switch self {
        case .storeInUse(let path, let pid):
            "\(path) is open in \(pid.map { "process \($0)" } ?? "another process or store"); close it first"
        case .changedDuringCompaction(let path): "\(path) changed while it was being compacted; nothing was replaced"
        case .store(let error): error.description
        case .io(let path, let reason): "\(path): \(reason)"
        }
    }
}
