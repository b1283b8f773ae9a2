import Foundation

/// How the memory tier is sized. `0` means no limit.
public struct MemoryConfig: Sendable {
    /// Expiry of objects written without one.
    public let expiry: Expiry
    /// Most objects kept; least-recently-used ones are evicted beyond it.
    public let countLimit: UInt
    /// Most total cost kept; least-recently-used objects are evicted beyond
    /// it. The cost of an object is the byte size of its stored data (1 when
    /// the memory tier is used without a transformer).
    public let totalCostLimit: UInt

    /// Makes a configuration; every limit of `0` means none.
    public init(expiry: Expiry = .never, countLimit: UInt = 0, totalCostLimit: UInt = 0) {
        self.expiry = expiry
        self.countLimit = countLimit
        self.totalCostLimit = totalCostLimit
    }
}
