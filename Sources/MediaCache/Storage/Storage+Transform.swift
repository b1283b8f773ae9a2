import Foundation

extension Storage {
    /// A view of this storage for values of another type. It shares the
    /// store, the memory tier, the serialization domain and the observers
    /// (upstream gives it a fresh memory cache and no observers, #246).
    public func transform<U>(transformer: Transformer<U>) -> Storage<Key, U> {
        Storage<Key, U>(hybridStorage: hybridStorage.transform(transformer: transformer))
    }

    /// A view storing `Data` as is.
    public func transformData() -> Storage<Key, Data> {
        transform(transformer: TransformerFactory.forData())
    }

    /// A view storing `U` as Codable JSON.
    public func transformCodable<U: Codable>(ofType: U.Type) -> Storage<Key, U> {
        transform(transformer: TransformerFactory.forCodable(ofType: U.self))
    }
}
