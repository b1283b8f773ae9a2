import CacheToolCore
import Foundation
import MediaStore
import Testing

/// `cachetool import` of a hostile export: every field of the manifest
/// is checked, files are regular files inside the export of exactly their
/// declared length, and a bad entry is skipped with one line naming it.
@Suite struct ImportHostileTests {
    static let value = Data("hello".utf8)
    static let digest = ContentDigest(of: value).hexString

    /// An entry of `files/a` (holding ``value``) with `fields` replaced.
    static func entry(_ key: String, _ fields: [String: String] = [:]) -> String {
        var all = [
            "key": "\"\(key)\"", "file": "\"files/a\"", "length": "5", "contentDigest": "\"\(digest)\"",
        ]
        for (name, value) in fields { all[name] = value }
        return "{" + all.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
    }

    static func manifest(_ entries: [String]) -> Data {
        Data((#"{"schema":"cachetool-export/1","entries":["# + entries.joined(separator: ",") + "]}").utf8)
    }

    /// An export in `directory/out` with `files/a`, listing `entries`.
    static func export(in directory: TemporaryDirectory, _ entries: [String]) throws -> String {
        let out = directory.url.appendingPathComponent("out")
        try FileManager.default.createDirectory(
            at: out.appendingPathComponent("files"), withIntermediateDirectories: true)
        try value.write(to: out.appendingPathComponent("files/a"))
        try manifest(entries).write(to: out.appendingPathComponent("manifest.json"))
        return out.path
    }

    static func keys(in store: String) async throws -> [String] {
        let listed = try await ToolProcess.cachetool(["-s", store, "ls", "--json"])
        return (listed.json?["entries"] as? [[String: Any]] ?? []).compactMap { $0["key"] as? String }.sorted()
    }

    @Test func fieldsOfTheWrongTypeOrRangeSkipTheirEntry() async throws {
        let directory = try TemporaryDirectory("import-fields")
        defer { directory.remove() }
        let out = try Self.export(
            in: directory,
            [
                Self.entry("good", ["cost": "3", "pinned": "true", "expiry": "null"]),
                Self.entry("negative-cost", ["cost": "-1"]),
                Self.entry("text-length", ["length": "\"5\""]),
                Self.entry("fraction", ["length": "5.5"]),
                Self.entry("huge", ["length": "99999999999999999999"]),
                Self.entry("number-expiry", ["expiry": "5"]),
                Self.entry("bad-date", ["expiry": "\"tomorrow\""]),
                Self.entry("number-pin", ["pinned": "1"]),
                Self.entry("short-digest", ["contentDigest": "\"abc\""]),
                #"{"file":"files/a","length":5}"#,
            ])
        let store = directory.path("store")
        let run = try await ToolProcess.cachetool(["-s", store, "import", out])
        #expect(!run.signaled && run.status == 1, "\(run.status) \(run.errors)")
        let lines = run.errors.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "cachetool: import: entry 2: cost must be an integer from 0 to 2^63-1, not -1",
                "cachetool: import: entry 3: length must be an integer from 0 to 2^63-1, not '5'",
                "cachetool: import: entry 4: length must be an integer from 0 to 2^63-1, not 5.5",
                "cachetool: import: entry 5: length must be an integer from 0 to 2^63-1, not 1e+20",
                "cachetool: import: entry 6: expiry must be an ISO 8601 date or null, not 5",
                "cachetool: import: entry 7: expiry must be an ISO 8601 date or null, not 'tomorrow'",
                "cachetool: import: entry 8: pinned must be true or false, not 1",
                "cachetool: import: entry 9: contentDigest must be 32 hexadecimal digits, not 'abc'",
                "cachetool: import: entry 10: key is missing",
            ], "\(run.errors)")
        #expect(try await Self.keys(in: store) == ["good"])
        let info = try #require(try await ToolProcess.cachetool(["-s", store, "info", "--json", "good"]).json)
        #expect(info["cost"] as? Int == 3)
        #expect(info["pinned"] as? Bool == true)
    }

    @Test func onlyRegularFilesInsideTheExportOfTheirLengthAreRead() async throws {
        let directory = try TemporaryDirectory("import-files")
        defer { directory.remove() }
        let outside = directory.path("outside")
        try Self.value.write(to: URL(fileURLWithPath: outside))
        let out = try Self.export(
            in: directory,
            [
                Self.entry("inside-link", ["file": "\"files/link\""]),
                Self.entry("outside-link", ["file": "\"files/out\""]),
                Self.entry("device", ["file": "\"files/null\""]),
                Self.entry("parent", ["file": "\"../outside\""]),
                Self.entry("absolute", ["file": "\"\(outside)\""]),
                Self.entry("directory", ["file": "\"files\""]),
                Self.entry("longer", ["length": "4"]),
                Self.entry("missing", ["file": "\"files/none\""]),
            ])
        let manager = FileManager.default
        try manager.createSymbolicLink(atPath: out + "/files/link", withDestinationPath: "a")
        try manager.createSymbolicLink(atPath: out + "/files/out", withDestinationPath: outside)
        try manager.createSymbolicLink(atPath: out + "/files/null", withDestinationPath: "/dev/null")
        let store = directory.path("store")
        let run = try await ToolProcess.cachetool(["-s", store, "import", out])
        #expect(run.status == 1)
        let lines = run.errors.split(separator: "\n").map(String.init)
        #expect(
            lines == [
                "cachetool: import: entry 2: file 'files/out' is outside the export",
                "cachetool: import: entry 3: file 'files/null' is outside the export",
                "cachetool: import: entry 4: file '../outside' is outside the export",
                "cachetool: import: entry 5: file '\(outside)' is an absolute path, not one inside the export",
                "cachetool: import: entry 6: file 'files' is not a regular file",
                "cachetool: import: entry 7: file 'files/a' has 5 bytes, not the 4 the manifest says",
                "cachetool: import: entry 8: file 'files/none' cannot be read: No such file or directory",
            ], "\(run.errors)")
        #expect(try await Self.keys(in: store) == ["inside-link"])
    }

    @Test func manifestParserChecksEveryField() throws {
        let manifest = try ImportManifest(
            Self.manifest([
                Self.entry(
                    "k",
                    [
                        "mimeType": "\"audio/mpeg\"", "etag": "null", "userInfo": #"{"a":"b"}"#,
                        "expiry": "\"2030-01-02T03:04:05Z\"", "cost": "0", "pinned": "false",
                        "contentDigest": "\"\(Self.digest.uppercased())\"",
                    ]),
                Self.entry("u", ["userInfo": #"{"a":1}"#]),
                Self.entry("m", ["mimeType": "7"]),
                Self.entry("dot", ["file": "\"./.\""]),
                Self.entry("nul", ["file": #""a\u0000b""#]),
                Self.entry("\\udcff"),
                Self.entry("max", ["length": "9223372036854775807"]),
                Self.entry("over", ["length": "9223372036854775808"]),
            ]))
        #expect(manifest.count == 8)
        #expect(manifest.entries.map(\.key) == ["k", "max"])
        let first = try #require(manifest.entries.first)
        #expect(first.metadata == EntryMetadata(mimeType: "audio/mpeg", userInfo: ["a": "b"]))
        #expect(first.expiry == ISO8601DateFormatter().date(from: "2030-01-02T03:04:05Z"))
        #expect(first.contentDigest == Self.digest)
        #expect(manifest.entries.last?.length == Int.max)
        #expect(
            manifest.errors.map(\.description) == [
                "entry 2: userInfo 'a' must be a string, not 1",
                "entry 3: mimeType must be a string or null, not 7",
                "entry 4: file './.' names no file of the export",
                "entry 5: file 'a\\x00b' holds a NUL byte",
                "entry 6: key must be a string, not text that is not UTF-8 or a number out of range",
                "entry 8: length must be an integer from 0 to 2^63-1, not 9.223372036854776e+18",
            ])
        var notUTF8 = Self.manifest([Self.entry("~")])
        notUTF8[try #require(notUTF8.firstIndex(of: UInt8(ascii: "~")))] = 0xFF
        #expect(performing: { try ImportManifest(notUTF8) }, throws: { "\($0)" == "not UTF-8 text" })
        #expect(throws: ImportManifest.ManifestError.self) {
            try ImportManifest(Data(#"{"schema":"other","entries":[]}"#.utf8))
        }
        #expect(throws: ImportManifest.ManifestError.self) { try ImportManifest(Data("[".utf8)) }
    }
}
