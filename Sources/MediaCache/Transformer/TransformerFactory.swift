import Foundation

/// Ready-made transformers.
public final class TransformerFactory {
    /// Stores `Data` as is.
    public static func forData() -> Transformer<Data> {
        Transformer<Data>(toData: { $0 }, fromData: { $0 })
    }

    /// Stores a `Codable` value as the JSON `{"object": …}` (a ``TypeWrapper``),
    /// the format hyperoslo/Cache writes, so its files decode here.
    public static func forCodable<U: Codable>(ofType: U.Type) -> Transformer<U> {
        Transformer<U>(
            toData: { object in try JSONEncoder().encode(TypeWrapper<U>(object: object)) },
            fromData: { data in try JSONDecoder().decode(TypeWrapper<U>.self, from: data).object }
        )
    }
}
