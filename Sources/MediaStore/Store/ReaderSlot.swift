/// One slot of the store's LMDB reader table.
public struct ReaderSlot: Sendable, Equatable {
    /// The process holding the slot.
    public var pid: Int32
    /// LMDB's thread or transaction identifier, in hex.
    public var thread: String
    /// The snapshot (transaction id) the reader holds; `nil` when idle.
    public var transactionID: UInt64?
    /// Whether the process is gone, so the slot is stale (pins old pages
    /// until cleared with ``MediaStore/clearStaleReaders()``).
    public var isStale: Bool
}
