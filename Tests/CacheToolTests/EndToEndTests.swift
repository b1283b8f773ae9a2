import Foundation
import MediaStore
import Testing

/// Runs the built `cachetool` against temporary stores, as a user does.
@Suite struct EndToEndTests {
    @Test func putThenCatReturnsTheSameBytes() async throws {
        let directory = try TemporaryDirectory("roundtrip")
        defer { directory.remove() }
        var random = SplitMix64(seed: 7)
        let value = random.data(700_000)
        try value.write(to: URL(fileURLWithPath: directory.path("input")))
        let store = directory.path("store")
        let put = try await ToolProcess.cachetool(["--store", store, "put", "track", directory.path("input")])
        #expect(put.status == 0, "\(put.errors)")
        let whole = try await ToolProcess.cachetool(["cat", "track", "--store", store])
        #expect(whole.status == 0)
        #expect(whole.output == value)
        let slice = try await ToolProcess.cachetool(["-s", store, "cat", "--range", "262100-262199", "track"])
        #expect(slice.output == value[262_100..<262_200])
        #expect(
            try await ToolProcess.cachetool(["-s", store, "cat", "--range=-10", "track"]).output == value.suffix(10))
        #expect(
            try await ToolProcess.cachetool(["-s", store, "cat", "--range", "699990-", "track"]).output
                == value.suffix(10))
        // Standard input, with metadata; the store comes from MEDIACACHE_STORE.
        let text = random.text(10_000)
        let stdinPut = try await ToolProcess.cachetool(
            ["put", "--mime", "text/plain", "--pin", "notes", "-"], input: text,
            environment: ["MEDIACACHE_STORE": store])
        #expect(stdinPut.status == 0, "\(stdinPut.errors)")
        #expect(
            try await ToolProcess.cachetool(["cat", "notes"], environment: ["MEDIACACHE_STORE": store]).output == text)
        let info = try #require(try await ToolProcess.cachetool(["-s", store, "info", "--json", "notes"]).json)
        #expect(info["mimeType"] as? String == "text/plain")
        #expect(info["pinned"] as? Bool == true)
        #expect(info["contentDigest"] as? String == ContentDigest(of: text).hexString)
    }

    @Test func jsonDocumentsHaveTheDocumentedSchema() async throws {
        let directory = try TemporaryDirectory("schema")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 11)
        let shared = random.data(600_000)
        for key in ["a", "b"] {
            #expect(try await ToolProcess.cachetool(["-s", store, "put", key, "-"], input: shared).status == 0)
        }
        #expect(
            try await ToolProcess.cachetool(
                ["-s", store, "put", "--expiry", "2001-01-01", "old", "-"], input: Data("x".utf8)
            ).status == 0)

        let entryFields = [
            "key", "length", "cachedBytes", "complete", "pinned", "holders", "expired", "contentDigest", "mimeType",
            "etag",
            "lastModified", "userInfo", "created", "lastAccess", "expiry", "cost", "chunkSize", "chunkCount",
            "version",
        ]
        let ls = try await ToolProcess.cachetool(["-s", store, "ls", "--json"])
        #expect(ls.status == 0)
        #expect(ls.text.hasPrefix(#"{"schema":"cachetool/1","command":"ls","store":"#))
        let entries = try #require(ls.json?["entries"] as? [[String: Any]])
        #expect(entries.map { $0["key"] as? String } == ["a", "b", "old"])
        for entry in entries { #expect(Set(entry.keys) == Set(entryFields)) }
        #expect(entries[2]["expired"] as? Bool == true)
        #expect(entries[0]["contentDigest"] as? String == ContentDigest(of: shared).hexString)
        #expect(entries[0]["chunkCount"] as? Int == 3)
        #expect(entries[2]["chunkCount"] as? Int == 0)
        // Filters and sorting.
        let sorted = try await ToolProcess.cachetool(["-s", store, "ls", "--json", "--sort", "size", "--match", "[ab]"])
            .json
        #expect((sorted?["entries"] as? [[String: Any]])?.count == 2)
        #expect((try await ToolProcess.cachetool(["-s", store, "ls", "--prefix", "o"]).text).hasSuffix(" old\n"))

        let info = try #require(try await ToolProcess.cachetool(["-s", store, "info", "--json", "a"]).json)
        #expect(
            Set(info.keys) == Set(entryFields + ["schema", "command", "cachedRanges", "sharedChunks", "sharingKeys"]))
        #expect((info["cachedRanges"] as? [[Int]]) == [[0, 600_000]])
        #expect(info["sharedChunks"] as? Int == 3)
        #expect(info["sharingKeys"] as? [String] == ["b"])

        let stats = try #require(try await ToolProcess.cachetool(["-s", store, "stats", "--json"]).json)
        #expect(
            Set(stats.keys) == [
                "schema", "command", "store", "entries", "completeEntries", "partialEntries", "logicalBytes",
                "storedBytes",
                "uniqueChunkBytes", "chunks", "compressionRatio", "dedupSavedBytes", "mapSize", "fileBytes",
                "mapUsedRatio",
                "fileToLiveRatio", "readers", "readerSlots", "evictions",
            ])
        #expect(stats["entries"] as? Int == 3)
        #expect(stats["logicalBytes"] as? Int == 1_200_001)
        #expect(stats["uniqueChunkBytes"] as? Int == 600_000)
        #expect(stats["dedupSavedBytes"] as? Int == 600_000)

        let verify = try #require(try await ToolProcess.cachetool(["-s", store, "verify", "--json"]).json)
        #expect(verify["clean"] as? Bool == true)
        #expect(verify["entries"] as? Int == 3)
        #expect(verify["chunksRead"] as? Int == 6)

        let readers = try #require(try await ToolProcess.cachetool(["-s", store, "readers", "--json", "--clear"]).json)
        #expect(readers["readers"] as? [Any] != nil)
        #expect(readers["cleared"] as? Int == 0)
    }

    @Test func verifyExitsThreeAndNamesTheKeyOfAFlippedChunkByte() async throws {
        let directory = try TemporaryDirectory("flip")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 13)
        let victim = random.data(300_000)
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "victim", "-"], input: victim).status == 0)
        #expect(
            try await ToolProcess.cachetool(["-s", store, "put", "bystander", "-"], input: random.data(300_000)).status
                == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "verify"]).status == 0)

        // Random bytes are stored raw: find a stretch of the value in the file and flip one bit in it.
        let dataURL = URL(fileURLWithPath: store).appendingPathComponent("data.mdb")
        var file = try Data(contentsOf: dataURL)
        let needle = victim[100_000..<100_064]
        let found = try #require(file.range(of: needle), "the value's bytes are not in data.mdb")
        file[found.lowerBound + 10] ^= 0x01
        try file.write(to: dataURL)

        let verify = try await ToolProcess.cachetool(["-s", store, "verify"])
        #expect(verify.status == 3)
        #expect(verify.text.contains("CORRUPT: victim: chunk 0"), "\(verify.text)")
        #expect(verify.errors.contains("corrupt: victim"), "\(verify.errors)")
        #expect(!verify.text.contains("bystander"))
        let json = try #require(try await ToolProcess.cachetool(["-s", store, "verify", "--json"]).json)
        #expect(json["clean"] as? Bool == false)
        #expect(json["corruptKeys"] as? [String] == ["victim"])
        // Reading it fails as corruption too, and never returns the bad bytes.
        let cat = try await ToolProcess.cachetool(["-s", store, "cat", "victim"])
        #expect(cat.status == 3)
        #expect(cat.output.count < StoreConfiguration.defaultChunkSize, "a corrupt chunk was written out")
        #expect(try await ToolProcess.cachetool(["-s", store, "cat", "bystander"]).status == 0)
    }

    @Test(arguments: [
        [], ["frobnicate"], ["cat"], ["cat", "k", "--range", "9-3"], ["evict"], ["evict", "--to", "lots"],
        ["put", "k", "-", "--expiry", "soon"], ["ls", "--sort", "color"], ["stats", "--bogus"],
        ["ls", "--complete", "--partial"],
    ])
    func usageErrorsExitTwo(arguments: [String]) async throws {
        let directory = try TemporaryDirectory("usage")
        defer { directory.remove() }
        #expect(
            try await ToolProcess.cachetool(["-s", directory.path("store"), "put", "k", "-"], input: Data("v".utf8))
                .status
                == 0)
        let result = try await ToolProcess.cachetool(["-s", directory.path("store")] + arguments)
        #expect(result.status == 2, "\(arguments): \(result.errors)")
        #expect(result.output.isEmpty)
        #expect(result.errors.hasPrefix(arguments.isEmpty ? "usage:" : "cachetool: "))
    }

    @Test func helpPerCommandExitsZero() async throws {
        for command in ["stats", "cat", "put", "verify", "compact"] {
            let result = try await ToolProcess.cachetool([command, "--help"])
            #expect(result.status == 0)
            #expect(result.text.hasPrefix("usage: cachetool \(command) "))
        }
    }

    @Test func errorsAreOneLineAndExitOne() async throws {
        let directory = try TemporaryDirectory("errors")
        defer { directory.remove() }
        let missing = directory.path("missing")
        let cases: [([String], String)] = [
            (
                ["-s", missing, "ls"],
                "cachetool: no store at \(missing) (the directory does not exist; use --store DIR)"
            ),
            (["-s", directory.url.path, "stats"], "cachetool: no store at \(directory.url.path) (no data.mdb in it)"),
        ]
        for (arguments, message) in cases {
            let result = try await ToolProcess.cachetool(arguments)
            #expect(result.status == 1)
            #expect(result.errors == message + "\n")
            #expect(!FileManager.default.fileExists(atPath: missing), "a read command created the store")
        }
        try Data("not a store".utf8).write(to: URL(fileURLWithPath: directory.path("plain")))
        let plain = try await ToolProcess.cachetool(["-s", directory.path("plain"), "ls"])
        #expect(plain.status == 1)
        #expect(
            plain.errors
                == "cachetool: \(directory.path("plain")) is not a media store: it is a file, not a directory\n")

        let foreign = directory.url.appendingPathComponent("foreign")
        try FileManager.default.createDirectory(at: foreign, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 8192).write(to: foreign.appendingPathComponent("data.mdb"))
        let garbage = try await ToolProcess.cachetool(["-s", foreign.path, "stats"])
        #expect(garbage.status == 1)
        #expect(garbage.errors.contains("is not a media store: data.mdb is not an LMDB file"))
        #expect(garbage.errors.split(separator: "\n").count == 1)

        let store = directory.path("store")
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "k", "-"], input: Data("value".utf8)).status == 0)
        let missingKey = try await ToolProcess.cachetool(["-s", store, "cat", "nope"])
        #expect(missingKey.status == 1)
        #expect(missingKey.errors == "cachetool: no entry for key nope\n")
        let badRange = try await ToolProcess.cachetool(["-s", store, "cat", "k", "--range", "3-9"])
        #expect(badRange.status == 1)
        #expect(badRange.errors == "cachetool: bad range 3-9: k has 5 bytes\n")
        let removeSome = try await ToolProcess.cachetool(["-s", store, "rm", "nope", "k"])
        #expect(removeSome.status == 1)
        #expect(try await ToolProcess.cachetool(["-s", store, "ls"]).text.isEmpty, "rm removed the present key too")
    }

    @Test func pinExpireAndEvict() async throws {
        let directory = try TemporaryDirectory("policy")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 17)
        for key in ["keep", "drop1", "drop2"] {
            #expect(
                try await ToolProcess.cachetool(["-s", store, "put", key, "-"], input: random.data(100_000)).status == 0
            )
        }
        #expect(
            try await ToolProcess.cachetool(
                ["-s", store, "put", "--expiry", "2001-01-01T00:00:00Z", "stale", "-"], input: Data("x".utf8)
            ).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "pin", "keep"]).status == 0)
        let expire = try #require(try await ToolProcess.cachetool(["-s", store, "expire", "--json"]).json)
        #expect(expire["removed"] as? Int == 1)
        let evict = try #require(try await ToolProcess.cachetool(["-s", store, "evict", "--to", "0", "--json"]).json)
        #expect(evict["evicted"] as? Int == 2)
        let keys =
            (try await ToolProcess.cachetool(["-s", store, "ls", "--json"]).json?["entries"] as? [[String: Any]])?
            .compactMap { $0["key"] as? String }
        #expect(keys == ["keep"])
        #expect(try await ToolProcess.cachetool(["-s", store, "unpin", "keep"]).status == 0)
        #expect(
            try await ToolProcess.cachetool(["-s", store, "evict", "--to", "0"]).text == "evicted 1 entry; 0 B stored\n"
        )
    }

    /// `pin`/`unpin` hold and release for a holder (the app's by default);
    /// `info` and `ls` name the holders; an entry others hold stays kept.
    @Test func holdersAreShownAndReleasedOneByOne() async throws {
        let directory = try TemporaryDirectory("holders")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 23)
        #expect(
            try await ToolProcess.cachetool(["-s", store, "put", "k", "-"], input: random.data(50_000)).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "pin", "--holder", "queue/1", "k"]).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "pin", "k"]).status == 0)
        let info = try #require(try await ToolProcess.cachetool(["-s", store, "info", "--json", "k"]).json)
        #expect(info["holders"] as? [String] == ["app", "queue/1"])
        #expect(
            try await ToolProcess.cachetool(["-s", store, "info", "k"]).text.contains("held by        app, queue/1"))
        #expect(try await ToolProcess.cachetool(["-s", store, "ls"]).text.hasSuffix(" k  (held by app, queue/1)\n"))
        let unpin = try await ToolProcess.cachetool(["-s", store, "unpin", "k"])
        #expect(unpin.status == 0)
        #expect(unpin.errors.contains("k stays held by queue/1"), "\(unpin.errors)")
        #expect(
            try await ToolProcess.cachetool(["-s", store, "evict", "--to", "0", "--json"]).json?["evicted"] as? Int == 0
        )
        #expect(try await ToolProcess.cachetool(["-s", store, "unpin", "--holder", "queue/1", "k"]).status == 0)
        let ls = try #require(
            try await ToolProcess.cachetool(["-s", store, "ls", "--json"]).json?["entries"] as? [[String: Any]])
        #expect(ls.first?["holders"] as? [String] == [])
        #expect(ls.first?["pinned"] as? Bool == false)
        #expect(try await ToolProcess.cachetool(["-s", store, "pin", "--holder", "", "k"]).status != 0)
    }

    @Test func compactRefusesWhileOpenThenShrinksTheFile() async throws {
        let directory = try TemporaryDirectory("compact")
        defer { directory.remove() }
        let store = directory.path("store")
        var random = SplitMix64(seed: 19)
        let kept = random.data(400_000)
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "kept", "-"], input: kept).status == 0)
        for index in 0..<4 {
            #expect(
                try await ToolProcess.cachetool(["-s", store, "put", "gone\(index)", "-"], input: random.data(500_000))
                    .status
                    == 0)
        }
        #expect(try await ToolProcess.cachetool(["-s", store, "rm", "gone0", "gone1", "gone2", "gone3"]).status == 0)

        do {
            let open = try MediaStore.openReadOnly(directory: URL(fileURLWithPath: store))
            let refused = try await ToolProcess.cachetool(["-s", store, "compact"])
            #expect(refused.status == 1)
            #expect(refused.errors.contains("is open in"), "\(refused.errors)")
            _ = open
        }
        let compacted = try #require(try await ToolProcess.cachetool(["-s", store, "compact", "--json"]).json)
        let before = try #require(compacted["bytesBefore"] as? Int)
        let after = try #require(compacted["bytesAfter"] as? Int)
        #expect(after < before - 1_500_000, "\(before) -> \(after)")
        #expect(try await ToolProcess.cachetool(["-s", store, "verify"]).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "cat", "kept"]).output == kept)
        #expect(
            try await ToolProcess.cachetool(["-s", store, "put", "after", "-"], input: Data("later".utf8)).status == 0)
        #expect(try await ToolProcess.cachetool(["-s", store, "cat", "after"]).text == "later")
    }

    @Test func exportThenImportKeepsBytesAndMetadata() async throws {
        let directory = try TemporaryDirectory("transfer")
        defer { directory.remove() }
        let source = directory.path("source")
        var random = SplitMix64(seed: 23)
        let values = [("a/track.mp3", random.data(300_000)), ("b", random.text(50_000)), ("tiny", Data("hi".utf8))]
        for (key, value) in values {
            #expect(
                try await ToolProcess.cachetool(
                    ["-s", source, "put", "--mime", "audio/mpeg", "--expiry", "never", key, "-"], input: value
                ).status == 0)
        }
        #expect(try await ToolProcess.cachetool(["-s", source, "pin", "b"]).status == 0)
        let export = try #require(
            try await ToolProcess.cachetool(["-s", source, "export", "--json", directory.path("out")]).json)
        #expect(export["exported"] as? Int == 3)
        // Files are named by their content digest (what xxh128sum prints).
        for (_, value) in values {
            let file = directory.url.appendingPathComponent("out/files/\(ContentDigest(of: value).hexString)")
            #expect(try Data(contentsOf: file) == value)
        }
        #expect(
            try await ToolProcess.cachetool(["-s", source, "export", directory.path("out")]).status == 1,
            "exported over an export")

        let target = directory.path("target")
        let imported = try #require(
            try await ToolProcess.cachetool(["-s", target, "import", "--json", directory.path("out")]).json)
        #expect(imported["imported"] as? Int == 3)
        for (key, value) in values {
            #expect(try await ToolProcess.cachetool(["-s", target, "cat", key]).output == value)
        }
        let info = try #require(try await ToolProcess.cachetool(["-s", target, "info", "--json", "b"]).json)
        #expect(info["pinned"] as? Bool == true)
        #expect(info["mimeType"] as? String == "audio/mpeg")

        // A damaged export file is refused by its digest and not imported.
        let file = directory.url.appendingPathComponent("out/files/\(ContentDigest(of: values[1].1).hexString)")
        var bytes = try Data(contentsOf: file)
        bytes[100] ^= 0xFF
        try bytes.write(to: file)
        let other = directory.path("other")
        let damaged = try await ToolProcess.cachetool(["-s", other, "import", directory.path("out")])
        #expect(damaged.status == 1)
        #expect(damaged.errors.contains("does not match its digest"))
        #expect(try await ToolProcess.cachetool(["-s", other, "info", "b"]).status == 1)
    }
}

/// `--key-file`: an encrypted store is created, read and verified with its
/// key, and refused without it or with another.
@Suite struct EncryptedStoreToolTests {
    @Test func anEncryptedStoreNeedsItsKeyFile() async throws {
        let directory = try TemporaryDirectory("encrypted")
        defer { directory.remove() }
        let keyFile = directory.path("store.key")
        let otherKeyFile = directory.path("other.key")
        try KeyFile.write(try StoreKey(bytes: Array(0..<32)), to: keyFile)
        try KeyFile.write(try StoreKey(bytes: Array(1...32)), to: otherKeyFile)
        var random = SplitMix64(seed: 29)
        let value = random.data(400_000)
        let store = directory.path("store")
        let put = try await ToolProcess.cachetool(
            ["-s", store, "--key-file", keyFile, "put", "track", "-"], input: value)
        #expect(put.status == 0, "\(put.errors)")
        let cat = try await ToolProcess.cachetool(["-s", store, "--key-file", keyFile, "cat", "track"])
        #expect(cat.status == 0, "\(cat.errors)")
        #expect(cat.output == value)
        let verify = try await ToolProcess.cachetool(["-s", store, "--key-file", keyFile, "verify"])
        #expect(verify.status == 0, "\(verify.errors)")

        let withoutKey = try await ToolProcess.cachetool(["-s", store, "cat", "track"])
        #expect(withoutKey.status == 1)
        #expect(withoutKey.errors.contains("is encrypted and no key was given"))
        #expect(withoutKey.errors.contains("--key-file"))
        let otherKey = try await ToolProcess.cachetool(["-s", store, "--key-file", otherKeyFile, "cat", "track"])
        #expect(otherKey.status == 1)
        #expect(otherKey.errors.contains("encrypted under another key"))
        #expect(otherKey.output.isEmpty)
        let missing = try await ToolProcess.cachetool([
            "-s", store, "--key-file", directory.path("none.key"), "cat", "track",
        ])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("--key-file"))
        // Still readable with the right key after the refused opens.
        #expect(try await ToolProcess.cachetool(["-s", store, "--key-file", keyFile, "cat", "track"]).output == value)
    }

    /// `rekey`: the store re-encrypted under the new key file; the old key
    /// refused afterwards; the new key file required and checked.
    @Test func rekeyMovesTheStoreToTheNewKey() async throws {
        let directory = try TemporaryDirectory("rekey")
        defer { directory.remove() }
        let oldKeyFile = directory.path("old.key")
        let newKeyFile = directory.path("new.key")
        try KeyFile.write(try StoreKey(bytes: Array(0..<32)), to: oldKeyFile)
        try KeyFile.write(try StoreKey(bytes: Array(1...32)), to: newKeyFile)
        var random = SplitMix64(seed: 30)
        let values = ["a": random.data(400_000), "b": random.data(300), "copy": Data()]
        let store = directory.path("store")
        for (key, value) in values where key != "copy" {
            let put = try await ToolProcess.cachetool(
                ["-s", store, "--key-file", oldKeyFile, "put", key, "-"], input: value)
            #expect(put.status == 0, "\(put.errors)")
        }
        let noNewKey = try await ToolProcess.cachetool(["-s", store, "--key-file", oldKeyFile, "rekey"])
        #expect(noNewKey.status == 2)
        #expect(noNewKey.errors.contains("--new-key-file"))
        let badNewKey = try await ToolProcess.cachetool([
            "-s", store, "--key-file", oldKeyFile, "rekey", "--new-key-file", directory.path("none.key"),
        ])
        #expect(badNewKey.status == 1)
        #expect(badNewKey.errors.contains("--new-key-file"))

        let rekey = try await ToolProcess.cachetool([
            "-s", store, "--key-file", oldKeyFile, "rekey", "--new-key-file", newKeyFile, "--json",
        ])
        #expect(rekey.status == 0, "\(rekey.errors)")
        #expect(rekey.json?["entriesMoved"] as? Int == 2)
        for (key, value) in values where key != "copy" {
            let cat = try await ToolProcess.cachetool(["-s", store, "--key-file", newKeyFile, "cat", key])
            #expect(cat.status == 0 && cat.output == value, "\(key): \(cat.errors)")
        }
        let old = try await ToolProcess.cachetool(["-s", store, "--key-file", oldKeyFile, "cat", "a"])
        #expect(old.status == 1)
        #expect(old.errors.contains("encrypted under another key"))
        #expect(try await ToolProcess.cachetool(["-s", store, "--key-file", newKeyFile, "verify"]).status == 0)
        // Again with the key it has: nothing to do.
        let again = try await ToolProcess.cachetool([
            "-s", store, "--key-file", newKeyFile, "rekey", "--new-key-file", newKeyFile,
        ])
        #expect(again.status == 0, "\(again.errors)")
    }
}
