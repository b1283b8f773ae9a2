import Foundation

/// A JSON object (hyperoslo/Cache helper).
public typealias JSONDictionary = [String: Any]

/// Stores a ``JSONDictionary`` through a Codable transformer (hyperoslo/Cache helper).
public struct JSONDictionaryWrapper: Codable {
    public enum CodingKeys: String, CodingKey {
        case jsonDictionary
    }

    /// The wrapped dictionary.
    public let jsonDictionary: JSONDictionary

    /// Wraps `jsonDictionary`.
    public init(jsonDictionary: JSONDictionary) {
        self.jsonDictionary = jsonDictionary
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let data = try container.decode(Data.self, forKey: .jsonDictionary)
        guard let dictionary = try JSONSerialization.jsonObject(with: data, options: []) as? JSONDictionary else {
            throw StorageError.decodingFailed
        }
        self.jsonDictionary = dictionary
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(
            try JSONSerialization.data(withJSONObject: jsonDictionary, options: []), forKey: .jsonDictionary)
    }
}
