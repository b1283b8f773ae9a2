/// An entry the store removed by itself.
public struct StoreRemoval: Sendable, Equatable {
    /// Why it was removed.
    public enum Reason: Sendable, Equatable {
        /// Evicted (least recently used) to keep within a limit.
        case evicted
        /// Removed by an expiry sweep.
        case expired
    }

    /// The entry's key.
    public var key: String
    /// Why.
    public var reason: Reason
}
