/// The JSON envelope of ``TransformerFactory/forCodable(ofType:)``:
/// `{"object": …}`, byte-compatible with hyperoslo/Cache.
public struct TypeWrapper<T: Codable>: Codable {
    enum CodingKeys: String, CodingKey {
        case object
    }

    /// The wrapped value.
    public let object: T

    /// Wraps `object`.
    public init(object: T) {
        self.object = object
    }
}

extension TypeWrapper: Sendable where T: Sendable {}
