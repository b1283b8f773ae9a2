import CacheToolCore
import Foundation

/// Entry points shared by the libFuzzer targets (FuzzTesting/) and the
/// test that replays their corpora: each takes arbitrary bytes and must
/// never crash, only accept or reject; a property that does not hold
/// throws ``FuzzFailure``.
public enum CacheToolFuzzing {
    /// Splits `bytes` on NUL into arguments and parses them, then runs the
    /// value parsers (sizes, ranges, expiry) on every argument. Returns
    /// whether the command line parsed.
    @discardableResult
    public static func parseArguments(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        for argument in arguments {
            _ = ByteSize.parse(argument)
            if let range = ByteRangeSpec.parse(argument) {
                for length in [nil, 0, 1, 1000, Int.max] {
                    if let resolved = range.resolve(length: length) {
                        try fuzzCheck(
                            resolved.lowerBound >= 0 && resolved.lowerBound <= resolved.upperBound,
                            "\(argument) resolves to \(resolved)")
                        if let length {
                            try fuzzCheck(resolved.upperBound <= length, "\(argument) resolves past \(length)")
                        }
                    }
                }
            }
            _ = ExpirySpec.parse(argument)
        }
        do {
            let parsed = try CommandTable.parser.parse(arguments)
            _ = CommandTable.parser.help(for: parsed.command)
            return true
        } catch {
            _ = error.message
            return false
        }
    }

    /// Parses `bytes` as an export's manifest.json (ImportManifest, no
    /// I/O). Every accepted entry has a length and cost from 0 to 2^63-1,
    /// a relative path that never climbs above the export, and a key the
    /// parser did not repair: no U+FFFD unless the input spells one.
    /// Entries and errors together are numbered 1...count once each.
    /// Returns whether the manifest was accepted as a whole.
    @discardableResult
    public static func parseImportManifest(_ bytes: [UInt8]) throws(FuzzFailure) -> Bool {
        let manifest: ImportManifest
        do {
            manifest = try ImportManifest(Data(bytes))
        } catch {
            try fuzzCheck(!error.description.isEmpty && !error.description.contains("\n"), "manifest error: \(error)")
            return false
        }
        let numbers = (manifest.entries.map(\.number) + manifest.errors.map(\.number)).sorted()
        try fuzzCheck(numbers == Array(stride(from: 1, through: manifest.count, by: 1)), "numbered \(numbers)")
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        let spellsReplacement = text.contains("\u{FFFD}") || text.contains("\\ufffd")
        for entry in manifest.entries {
            try fuzzCheck(entry.length >= 0 && Int64(exactly: entry.length) != nil, "length \(entry.length)")
            try fuzzCheck(entry.cost >= 0 && Int64(exactly: entry.cost) != nil, "cost \(entry.cost)")
            try fuzzCheck(!entry.file.hasPrefix("/") && !entry.file.utf8.contains(0), "file \(entry.file)")
            var depth = 0
            for component in entry.file.split(separator: "/") where component != "." {
                depth += component == ".." ? -1 : 1
                try fuzzCheck(depth >= 0, "file \(entry.file) leaves the export")
            }
            try fuzzCheck(depth > 0, "file \(entry.file) names the export itself")
            try fuzzCheck(
                spellsReplacement || !entry.key.unicodeScalars.contains("\u{FFFD}"), "key \(entry.key) was repaired")
            try fuzzCheck(
                entry.contentDigest.utf8.count == 32 && entry.contentDigest == entry.contentDigest.lowercased(),
                "digest \(entry.contentDigest)")
        }
        for error in manifest.errors {
            try fuzzCheck(!error.description.contains("\n"), "entry error of two lines: \(error)")
        }
        return true
    }
}
