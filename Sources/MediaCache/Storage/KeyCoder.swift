import Foundation

/// Turns keys into the store's string keys and back, stably across runs.
///
/// `String` keys are stored as they are (a URL string stays readable in
/// `cachetool`), `URL` as its absolute string, `LosslessStringConvertible`
/// keys (`Int`, …) as their description, other `Codable` keys as JSON.
/// Any other key is stored as `String(describing:)`, which cannot be read
/// back, so such keys are missing from the disk tier's ``DiskStorage/allKeys``.
@usableFromInline
enum KeyCoder {
    /// The store key for `key`. Inlined, so that for `String` keys a
    /// specialized caller does no dynamic cast at all.
    @inlinable
    static func encode<Key: Hashable>(_ key: Key) -> String {
        if Key.self == String.self { return key as! String }
        return encodeOther(key)
    }

    @usableFromInline
    static func encodeOther<Key: Hashable>(_ key: Key) -> String {
        if let string = key as? String { return string }
        if let url = key as? URL { return url.absoluteString }
        if let convertible = key as? any LosslessStringConvertible { return convertible.description }
        if let encodable = key as? any Encodable {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let data = try? encoder.encode(encodable), let string = String(data: data, encoding: .utf8) {
                return string
            }
        }
        return String(describing: key)
    }

    static func decode<Key: Hashable>(_ string: String, as type: Key.Type) -> Key? {
        if Key.self == String.self { return string as? Key }
        if Key.self == URL.self { return URL(string: string) as? Key }
        if let convertible = Key.self as? any LosslessStringConvertible.Type {
            return convertible.init(string) as? Key
        }
        if let decodable = Key.self as? any Decodable.Type {
            return (try? JSONDecoder().decode(decodable, from: Data(string.utf8))) as? Key
        }
        return nil
    }
}
