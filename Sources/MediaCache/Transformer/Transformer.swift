import Foundation

/// Converts values to and from the bytes the disk tier stores.
public final class Transformer<T> {
    @usableFromInline let toData: (T) throws -> Data
    @usableFromInline let fromData: (Data) throws -> T

    /// Makes a transformer from its two directions.
    public init(toData: @escaping (T) throws -> Data, fromData: @escaping (Data) throws -> T) {
        self.toData = toData
        self.fromData = fromData
    }
}

// The closures are immutable; they are not `@Sendable` because upstream's are not (source compatibility), so this stays unchecked.
extension Transformer: @unchecked Sendable where T: Sendable {}
