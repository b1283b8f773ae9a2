import Foundation

/// An array of JSON objects (hyperoslo/Cache helper).
public typealias JSONArray = [JSONDictionary]

/// Stores a ``JSONArray`` through a Codable transformer (hyperoslo/Cache helper).
public struct JSONArrayWrapper: Codable {
    public enum CodingKeys: String, CodingKey {
        case jsonArray
    }

    /// The wrapped array.
    public let jsonArray: JSONArray

    /// Wraps `jsonArray`.
    public init(jsonArray: JSONArray) {
        self.jsonArray = jsonArray
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let data = try container.decode(Data.self, forKey: .jsonArray)
        guard let jsonArray = try JSONSerialization.jsonObject(with: data, options: []) as? JSONArray else {
            throw StorageError.decodingFailed
        }
        self.jsonArray = jsonArray
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(try JSONSerialization.data(withJSONObject: jsonArray, options: []), forKey: .jsonArray)
    }
}
