import Foundation

/// Converts values to and from the bytes the disk tier stores.
public final class Transformer<T>: @unchecked Sendable {
    let toData: (T) throws -> Data
    let fromData: (Data) throws -> T

    /// Makes a transformer from its two directions.
    public init(toData: @escaping (T) throws -> Data, fromData: @escaping (Data) throws -> T) {
        self.toData = toData
        self.fromData = fromData
    }
}
