import Foundation

extension JSONDecoder {
    /// Decodes `T` from JSON `data` (hyperoslo/Cache helper).
    public static func decode<T: Decodable>(_ data: Data, to type: T.Type) throws -> T {
        try JSONDecoder().decode(T.self, from: data)
    }

    /// Decodes `T` from a JSON string (hyperoslo/Cache helper).
    public static func decode<T: Decodable>(_ string: String, to type: T.Type) throws -> T {
        guard let data = string.data(using: .utf8) else { throw StorageError.decodingFailed }
        return try decode(data, to: type)
    }

    /// Decodes `T` from a JSON dictionary (hyperoslo/Cache helper).
    public static func decode<T: Decodable>(_ json: [String: Any], to type: T.Type) throws -> T {
        try decode(try JSONSerialization.data(withJSONObject: json, options: []), to: type)
    }
}
