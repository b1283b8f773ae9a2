import Foundation
import MediaStore

/// An export's `manifest.json`, checked without touching any file: the
/// entries whose every field is valid, and one ``EntryError`` per entry
/// that is not (`import` skips those and reports them).
///
/// Rules: `key` a string; `file` a relative path of the export that no
/// `..` leaves; `length` an integer from 0 to 2^63-1; `contentDigest` 32
/// hexadecimal digits; `mimeType`, `etag`, `lastModified` a string or
/// null; `userInfo` an object of strings or null; `expiry` an ISO 8601
/// date or null (never); `pinned` true or false; `cost` an integer from 0
/// to 2^63-1. Text that is not UTF-8 (raw or as `\u` escapes) is refused.
/// Other fields are ignored.
public struct ImportManifest: Sendable {
    /// A valid entry.
    public struct Entry: Sendable, Equatable {
        /// Its position in `entries`, from 1.
        public var number: Int
        public var key: String
        /// A path relative to the export directory.
        public var file: String
        public var length: Int
        public var contentDigest: String
        public var metadata: EntryMetadata
        /// `nil`: never expires.
        public var expiry: Date?
        public var pinned: Bool
        public var cost: Int
    }

    /// Why an entry is skipped: its number and field, in one line.
    public struct EntryError: Error, Sendable, Equatable, CustomStringConvertible {
        public var number: Int
        /// The field at fault, or `nil` when the entry is not an object.
        public var field: String?
        public var problem: String

        public var description: String {
            "entry \(number): " + (field.map { "\($0) \(problem)" } ?? problem)
        }
    }

    /// Why the whole manifest is refused.
    public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    public static let schema = "cachetool-export/1"

    /// The valid entries, in manifest order.
    public let entries: [Entry]
    /// The invalid entries, in manifest order.
    public let errors: [EntryError]
    /// How many entries the manifest lists.
    public var count: Int { entries.count + errors.count }

    /// Parses and checks `data`.
    public init(_ data: Data) throws(ManifestError) {
        guard String(validating: data, as: UTF8.self) != nil else { throw ManifestError(description: "not UTF-8 text") }
        let root: Value
        do {
            root = try JSONDecoder().decode(Value.self, from: data)
        } catch {
            throw ManifestError(description: "not valid JSON")
        }
        guard case .object(let fields) = root else { throw ManifestError(description: "not a JSON object") }
        guard case .string(Self.schema) = fields["schema"] else {
            throw ManifestError(description: "its schema is not \(Self.schema)")
        }
        guard case .array(let items) = fields["entries"] else {
            throw ManifestError(description: "it has no entries array")
        }
        var entries: [Entry] = []
        var errors: [EntryError] = []
        for (index, item) in items.enumerated() {
            do {
                entries.append(try Self.entry(item, number: index + 1))
            } catch {
                errors.append(error)
            }
        }
        self.entries = entries
        self.errors = errors
    }

    private static func entry(_ item: Value, number: Int) throws(EntryError) -> Entry {
        guard case .object(let fields) = item else {
            throw EntryError(number: number, field: nil, problem: "is \(item.kind), not an object")
        }
        func fail(_ field: String, _ problem: String) -> EntryError {
            EntryError(number: number, field: field, problem: problem)
        }
        func string(_ field: String) throws(EntryError) -> String {
            guard case .string(let text) = fields[field] else {
                throw fail(field, fields[field].map { "must be a string, not \($0.kind)" } ?? "is missing")
            }
            return text
        }
        func optionalString(_ field: String) throws(EntryError) -> String? {
            switch fields[field] {
            case nil, .null: return nil
            case .string(let text): return text
            case let other?: throw fail(field, "must be a string or null, not \(other.kind)")
            }
        }
        func count(_ field: String, default value: Int?) throws(EntryError) -> Int {
            switch fields[field] {
            case nil where value != nil: return value ?? 0
            case .integer(let number) where number >= 0:
                // Int is 32 bits on watchOS: a length beyond it is out of range there.
                guard let value = Int(exactly: number) else { throw fail(field, "is \(number), beyond this platform") }
                return value
            case let other:
                throw fail(field, other.map { "must be an integer from 0 to 2^63-1, not \($0.kind)" } ?? "is missing")
            }
        }

        let key = try string("key")
        let file = try string("file")
        if let problem = Self.pathProblem(file) { throw fail("file", problem) }
        let length = try count("length", default: nil)
        let digest = try string("contentDigest")
        guard digest.utf8.count == 32, digest.utf8.allSatisfy({ Character(Unicode.Scalar($0)).isHexDigit }) else {
            throw fail("contentDigest", "must be 32 hexadecimal digits, not \(Value.string(digest).kind)")
        }
        var metadata = EntryMetadata(
            mimeType: try optionalString("mimeType"), etag: try optionalString("etag"),
            lastModified: try optionalString("lastModified"))
        switch fields["userInfo"] {
        case nil, .null: break
        case .object(let pairs):
            for (name, value) in pairs {
                guard case .string(let text) = value else {
                    throw fail("userInfo", "\(Value.string(name).kind) must be a string, not \(value.kind)")
                }
                metadata.userInfo[name] = text
            }
        case let other?: throw fail("userInfo", "must be an object of strings or null, not \(other.kind)")
        }
        var expiry: Date?
        switch fields["expiry"] {
        case nil, .null: expiry = nil
        case .string(let text):
            guard let date = ISO8601DateFormatter().date(from: text) else {
                throw fail("expiry", "must be an ISO 8601 date or null, not \(Value.string(text).kind)")
            }
            expiry = date
        case let other?: throw fail("expiry", "must be an ISO 8601 date or null, not \(other.kind)")
        }
        var pinned = false
        switch fields["pinned"] {
        case nil: break
        case .bool(let value): pinned = value
        case let other?: throw fail("pinned", "must be true or false, not \(other.kind)")
        }
        let cost = try count("cost", default: 0)
        return Entry(
            number: number, key: key, file: file, length: length, contentDigest: digest.lowercased(),
            metadata: metadata, expiry: expiry, pinned: pinned, cost: cost)
    }

    /// Why `path` is not a file inside the export, or `nil`: it must be
    /// relative, name something below the export, and have no `..`.
    static func pathProblem(_ path: String) -> String? {
        let shown = Value.string(path).kind
        if path.utf8.contains(0) { return "\(shown) holds a NUL byte" }
        if path.hasPrefix("/") { return "\(shown) is an absolute path, not one inside the export" }
        let components = path.split(separator: "/", omittingEmptySubsequences: true)
        if components.contains("..") { return "\(shown) is outside the export" }
        if components.allSatisfy({ $0 == "." }) { return "\(shown) names no file of the export" }
        return nil
    }

    /// A JSON value as the manifest holds it; `.unreadable` is text that
    /// is not UTF-8 or a number that no type holds.
    indirect enum Value: Decodable, Sendable {
        case null
        case bool(Bool)
        case integer(Int64)
        case number(Double)
        case string(String)
        case array([Value])
        case object([String: Value])
        case unreadable

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if container.decodeNil() {
                self = .null
            } else if let value = try? container.decode(Bool.self) {
                self = .bool(value)
            } else if let value = try? container.decode(Int64.self) {
                self = .integer(value)
            } else if let value = try? container.decode(Double.self) {
                self = .number(value)
            } else if let value = try? container.decode(String.self) {
                self = .string(value)
            } else if let value = try? container.decode([Value].self) {
                self = .array(value)
            } else if let value = try? container.decode([String: Value].self) {
                self = .object(value)
            } else {
                self = .unreadable
            }
        }

        /// What the value is, for a message: its type, and a short form of a scalar.
        var kind: String {
            switch self {
            case .null: "null"
            case .bool(let value): "\(value)"
            case .integer(let value): "\(value)"
            case .number(let value): "\(value)"
            case .string(let text):
                "'" + CacheTool.printable(text.count > 200 ? String(text.prefix(200)) + "…" : text) + "'"
            case .array: "an array"
            case .object: "an object"
            case .unreadable: "text that is not UTF-8 or a number out of range"
            }
        }
    }
}
