import Foundation
import MediaStore

/// How entries and sizes are shown, as text and as JSON.
enum EntryFormatting {
    /// The JSON object of an entry (`ls` items and `info`), fields in a fixed order.
    static func json(_ info: EntryInfo, holders: [String], now: Date = Date()) -> [(String, JSONValue)] {
        [
            ("key", .string(info.key)),
            ("length", .optional(info.length, JSONValue.int)),
            ("cachedBytes", .int(info.cachedBytes)),
            ("complete", .bool(info.isComplete)),
            ("pinned", .bool(info.isPinned)),
            ("holders", .array(holders.map(JSONValue.string))),
            ("expired", .bool(info.isExpired(at: now))),
            ("contentDigest", .optional(info.contentDigest?.hexString, JSONValue.string)),
            ("mimeType", .optional(info.metadata.mimeType, JSONValue.string)),
            ("etag", .optional(info.metadata.etag, JSONValue.string)),
            ("lastModified", .optional(info.metadata.lastModified, JSONValue.string)),
            (
                "userInfo",
                .object(info.metadata.userInfo.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })
            ),
            ("created", .date(info.created)),
            ("lastAccess", .date(info.lastAccess)),
            ("expiry", .date(info.expiry)),
            ("cost", .int(info.cost)),
            ("chunkSize", .int(info.chunkSize)),
            ("chunkCount", .int(info.chunkCount)),
            // The entry's version (changes with every replacement): a script
            // sees whether two looks saw the same entry.
            ("version", .int(Int(truncatingIfNeeded: info.version))),
        ]
    }

    /// `C P X` flags: complete, pinned, expired.
    static func flags(_ info: EntryInfo, now: Date = Date()) -> String {
        (info.isComplete ? "C" : "-") + (info.isPinned ? "P" : "-") + (info.isExpired(at: now) ? "X" : "-")
    }

    static func date(_ date: Date?) -> String {
        guard let date else { return "never" }
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: date)
    }

    /// `1234/5678` (cached/length), `1234/?` when the length is unknown.
    static func size(_ info: EntryInfo) -> String {
        if info.isComplete { return String(info.cachedBytes) }
        return "\(info.cachedBytes)/\(info.length.map(String.init) ?? "?")"
    }

    /// `0-99,200-` style list of half-open ranges as inclusive spans.
    static func ranges(_ ranges: [Range<Int>]) -> String {
        ranges.isEmpty ? "none" : ranges.map { "\($0.lowerBound)-\($0.upperBound - 1)" }.joined(separator: ",")
    }
}
