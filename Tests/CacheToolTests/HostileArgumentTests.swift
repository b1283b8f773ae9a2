import Foundation
import MediaStore
import Testing

/// cachetool's command line and store given by someone careless or
/// hostile: arguments that are not UTF-8, an empty `--store`, a damaged
/// store, files that are not regular.
@Suite struct HostileArgumentTests {
    /// Runs cachetool through `sh`, with every `@KEY@` argument replaced
    /// by the bytes `printf` makes of `key` (arguments are Swift strings: UTF-8 only).
    static func cachetool(_ arguments: [String], key: String) async throws -> ToolProcess.Result {
        let script = """
            tool=$1; key=$(printf "$2"); shift 2
            for a; do shift; if [ "$a" = @KEY@ ]; then set -- "$@" "$key"; else set -- "$@" "$a"; fi; done
            exec "$tool" "$@"
            """
        return try await ToolProcess.run(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", script, "sh", try ToolProcess.executable("cachetool").path, key] + arguments)
    }

    @Test func keysThatAreNotUTF8AreRefusedNotMerged() async throws {
        let directory = try TemporaryDirectory("non-utf8-keys")
        defer { directory.remove() }
        let store = directory.path("store")
        let input = directory.path("input")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: input))
        // A key that really holds U+FFFD, which a repaired argument would name.
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "cafe\u{FFFD}", input]).status == 0)
        for (key, command) in [
            (#"cafe\377"#, ["put", "@KEY@", input]), (#"cafe\376"#, ["put", "@KEY@", input]),
            (#"cafe\377"#, ["pin", "@KEY@"]), (#"cafe\377"#, ["unpin", "@KEY@"]), (#"cafe\377"#, ["info", "@KEY@"]),
            (#"cafe\377"#, ["cat", "@KEY@"]), (#"cafe\377"#, ["rm", "@KEY@"]),
        ] {
            let run = try await Self.cachetool(["-s", store] + command, key: key)
            #expect(run.status == 2, "\(command): \(run.status) \(run.errors)")
            #expect(run.output.isEmpty, "\(command)")
            #expect(
                run.errors.hasPrefix("cachetool: argument 4 is not valid UTF-8 ('caf"), "\(command): \(run.errors)")
        }
        let listed = try await ToolProcess.cachetool(["-s", store, "ls", "--json"])
        let entries = try #require(listed.json?["entries"] as? [[String: Any]])
        #expect(entries.map { $0["key"] as? String } == ["cafe\u{FFFD}"])
        #expect(entries.first?["pinned"] as? Bool == false)
    }

    @Test func anEmptyStoreIsAUsageErrorNotTheDefaultStore() async throws {
        let directory = try TemporaryDirectory("empty-store")
        defer { directory.remove() }
        let input = directory.path("input")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: input))
        let environment = ["XDG_CACHE_HOME": directory.path("cache"), "HOME": directory.path("home")]
        for arguments in [
            ["--store", "", "put", "k", input], ["-s", "", "put", "k", input], ["put", "--store=", "k", input],
            ["ls", "--store", ""], ["stats", "-s", ""],
        ] {
            let run = try await ToolProcess.cachetool(arguments, environment: environment)
            #expect(run.status == 2, "\(arguments): \(run.status) \(run.errors)")
            #expect(
                run.errors.hasPrefix("cachetool: --store needs a directory, not an empty string\n"),
                "\(arguments): \(run.errors)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("cache")), "the default store was written")
        #expect(!FileManager.default.fileExists(atPath: directory.path("home")))
    }

    @Test func aWriteToADamagedStoreSaysItWasMovedAside() async throws {
        let directory = try TemporaryDirectory("damaged-store")
        defer { directory.remove() }
        let store = directory.path("store")
        #expect(try await ToolProcess.cachetool(["-s", store, "put", "old", "-"], input: Data("old".utf8)).status == 0)
        // Meta page 0's page size (offset 40) zeroed: the open-time check finds it.
        let data = try FileHandle(forWritingTo: URL(fileURLWithPath: store + "/data.mdb"))
        try data.seek(toOffset: 40)
        try data.write(contentsOf: Data(count: 4))
        try data.close()
        let run = try await ToolProcess.cachetool(["-s", store, "put", "new", "-"], input: Data("new".utf8))
        #expect(run.status == 0, "\(run.errors)")
        let copies = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasPrefix("damaged-") }
        #expect(copies.count == 1)
        let lines = run.errors.split(separator: "\n").map(String.init)
        #expect(lines.count == 1, "\(run.errors)")
        #expect(lines.first?.hasPrefix("cachetool: the store was damaged (") == true, "\(run.errors)")
        #expect(lines.first?.hasSuffix("; the damaged files are in \(store)/\(copies.first ?? "?")") == true)
    }

    @Test func putOfADirectoryOrAProcFileSaysOneClearThing() async throws {
        let directory = try TemporaryDirectory("put-odd-files")
        defer { directory.remove() }
        let store = directory.path("store")
        let folder = directory.path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let run = try await ToolProcess.cachetool(["-s", store, "put", "k", folder])
        #expect(run.status == 1)
        #expect(run.errors == "cachetool: put: \(folder) is a directory\n")
        let missing = try await ToolProcess.cachetool(["-s", store, "put", "k", directory.path("none")])
        #expect(missing.errors == "cachetool: put: cannot read \(directory.path("none")): No such file or directory\n")
        #if os(Linux)
            // /proc files say 0 bytes and hold more: stored as read.
            let proc = try await ToolProcess.cachetool(["-s", store, "put", "status", "/proc/self/status"])
            #expect(proc.status == 0, "\(proc.errors)")
            #expect(
                try await ToolProcess.cachetool(["-s", store, "cat", "status"]).text.hasPrefix("Name:\tcachetool\n"))
            // Reading /proc/self/mem from offset 0 fails with EIO: the system's words, not an NSError dump.
            let unreadable = try await ToolProcess.cachetool(["-s", store, "put", "mem", "/proc/self/mem"])
            #expect(unreadable.status == 1)
            #expect(unreadable.errors == "cachetool: cannot read the input: Input/output error\n")
        #endif
    }
}
