import CLMDB
import Foundation
import Testing

@testable import MediaStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Point 12: magic + version; a foreign LMDB file, a plain file, other
/// files or an unwritable directory give a clear typed error, and nothing
/// is changed or deleted.
@Suite struct FormatTests {
    let root = temporaryPath("format")

    init() throws {
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    /// Names and bytes of every file under `directory` but LMDB's lock
    /// file (runtime state that any open rewrites), to show a failed open
    /// changed nothing.
    func snapshot(_ directory: URL) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where !name.contains("lock") {
            result[name] = try Data(contentsOf: directory.appendingPathComponent(name))
        }
        return result
    }

    func expectRefused(
        _ directory: URL, sourceLocation: SourceLocation = #_sourceLocation, _ check: (StoreError) -> Bool
    ) throws {
        let before = try snapshot(directory)
        for readOnly in [false, true] {
            let error = #expect(throws: StoreError.self, sourceLocation: sourceLocation) {
                _ = readOnly ? try MediaStore.openReadOnly(directory: directory) : try MediaStore(directory: directory)
            }
            if let error { #expect(check(error), "got \(error)", sourceLocation: sourceLocation) }
        }
        #expect(try snapshot(directory) == before, "the directory changed", sourceLocation: sourceLocation)
    }

    static func isNotAStore(_ error: StoreError) -> Bool {
        if case .notAStore = error { return true }
        return false
    }

    /// Writes an LMDB environment (`data.mdb` in `directory`) with the raw binding.
    func writeLMDB(_ directory: URL, _ body: (LMDBTransaction) throws -> Void) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let environment = try LMDBEnvironment(
            directory: directory.path, mapSize: 8 << 20, maxDatabases: 8, readOnly: false)
        let transaction = try LMDBTransaction(environment: environment, readOnly: false)
        try body(transaction)
        try transaction.commit()
    }

    @Test func aPlainFileIsNotAStore() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("file")
        try Data("hello".utf8).write(to: file)
        let error = #expect(throws: StoreError.self) { try MediaStore(directory: file) }
        #expect(error.map(Self.isNotAStore) == true, "got \(String(describing: error))")
        #expect(try Data(contentsOf: file) == Data("hello".utf8))
        #expect(throws: StoreError.self) { try MediaStore.openReadOnly(directory: file) }
    }

    @Test func aDirectoryOfOtherFilesIsNotAStore() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("notes".utf8).write(to: root.appendingPathComponent("notes.txt"))
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("photos"), withIntermediateDirectories: false)
        let error = #expect(throws: StoreError.self) { try MediaStore(directory: root) }
        #expect(error.map(Self.isNotAStore) == true, "got \(String(describing: error))")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: root.path)) == ["notes.txt", "photos"])
    }

    @Test func aMissingOrEmptyDirectoryCannotBeOpenedReadOnly() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let missing = root.appendingPathComponent("missing")
        #expect(throws: StoreError.self) { try MediaStore.openReadOnly(directory: missing) }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
        #expect(throws: StoreError.self) { try MediaStore.openReadOnly(directory: root) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: root.path) == [])
    }

    @Test func aGarbageDataFileIsNotAStore() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        var generator = SplitMix64(seed: 121)
        try Data(generator.bulkBytes(64 << 10)).write(to: root.appendingPathComponent("data.mdb"))
        try expectRefused(root, Self.isNotAStore)
    }

    @Test func aForeignLMDBFileIsNotAStoreAndStaysUntouched() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        // Plain records in the main database.
        let plain = root.appendingPathComponent("plain")
        try writeLMDB(plain) { transaction in
            try transaction.put(LMDBDatabase(handle: 1), key: Array("user:1".utf8), value: Array("alice".utf8))
        }
        try expectRefused(plain, Self.isNotAStore)

        // A plain record named like our database (mdb_dbi_open says MDB_INCOMPATIBLE).
        let clash = root.appendingPathComponent("clash")
        try writeLMDB(clash) { transaction in
            try transaction.put(LMDBDatabase(handle: 1), key: Array("meta".utf8), value: Array("x".utf8))
        }
        try expectRefused(clash, Self.isNotAStore)

        // A named `meta` database without our format record.
        let named = root.appendingPathComponent("named")
        try writeLMDB(named) { transaction in
            let meta = try transaction.openDatabase("meta", create: true)
            try transaction.put(meta, key: Array("schema".utf8), value: Array("7".utf8))
        }
        try expectRefused(named, Self.isNotAStore)

        // Our record name with someone else's magic.
        let tagged = root.appendingPathComponent("tagged")
        try writeLMDB(tagged) { transaction in
            let meta = try transaction.openDatabase("meta", create: true)
            try transaction.put(meta, key: Array("format".utf8), value: Array("OTHERFMT\u{1}\u{0}".utf8))
        }
        try expectRefused(tagged, Self.isNotAStore)
    }

    @Test(.enabled(if: ExternalTool.available("mdb_load"), "needs mdb_load (lmdb-utils)"))
    func aForeignFileMadeByMdbLoadIsNotAStore() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let tool = "/usr/bin/mdb_load"
        try #require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: run Tools/bootstrap")
        let input = root.appendingPathComponent("dump.txt")
        let dump = "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 6b6579\n 76616c7565\nDATA=END\n"
        try Data(dump.utf8).write(to: input)
        let store = root.appendingPathComponent("foreign")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: false)
        _ = try runTool(tool, ["-f", input.path, store.path])
        #expect(FileManager.default.fileExists(atPath: store.appendingPathComponent("data.mdb").path))
        try expectRefused(store, Self.isNotAStore)
    }

    @Test func aNewerFormatVersionIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("store")
        do {
            let store = try MediaStore(directory: directory)
            try store.put([1, 2, 3], forKey: "k")
        }
        try writeLMDB(directory) { transaction in
            let meta = try transaction.openDatabase("meta", create: false)
            var bytes = StoreFormat.magic
            bytes += [UInt8(StoreFormat.newestVersion + 1), 0]  // the next version, little-endian
            try transaction.put(meta, key: Array("format".utf8), value: bytes)
        }
        try expectRefused(directory) {
            $0
                == .unsupportedFormatVersion(
                    found: Int(StoreFormat.newestVersion) + 1, supported: Int(StoreFormat.newestVersion))
        }
    }

    /// A plain store marked with the encrypted format, without the
    /// encryption row, is damage, not a store to read as plain.
    @Test func theEncryptedVersionWithoutItsRowIsRefused() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("store")
        do {
            let store = try MediaStore(directory: directory)
            try store.put([1, 2, 3], forKey: "k")
        }
        try writeLMDB(directory) { transaction in
            let meta = try transaction.openDatabase("meta", create: false)
            try transaction.put(
                meta, key: Array("format".utf8), value: StoreFormat.encoded(version: StoreFormat.encryptedVersion))
        }
        try expectRefused(directory) {
            $0 == .damagedStore(reason: "an encrypted store's meta has no encryption row")
        }
    }

    @Test func theCurrentFormatIsWrittenAndReadBack() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("store")
        do {
            let store = try MediaStore(directory: directory)
            try store.put([1], forKey: "k")
        }
        let environment = try LMDBEnvironment(directory: directory.path, mapSize: nil, maxDatabases: 8, readOnly: true)
        let transaction = try LMDBTransaction(environment: environment, readOnly: true)
        let meta = try transaction.openDatabase("meta", create: false)
        let format = try #require(try transaction.value(meta, key: Array("format".utf8)))
        #expect(StoreFormat.version(of: format) == StoreFormat.version)
        #expect(Array(format.prefix(StoreFormat.magic.count)) == StoreFormat.magic)
        transaction.abort()
    }

    /// A compacted copy (what `mdb_copy -c` makes) has an empty free list:
    /// it must open as the store it is, keys, seed and counters intact.
    @Test func aCompactedCopyOpensWithItsEntries() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let original = root.appendingPathComponent("original")
        let copy = root.appendingPathComponent("copy")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        var generator = SplitMix64(seed: 122)
        let value = generator.bulkBytes(300_000)
        do {
            let store = try MediaStore(directory: original, configuration: StoreConfiguration(initialMapSize: 64 << 20))
            try store.put(value, forKey: "big")
            try store.put([1, 2, 3], forKey: "small")
            try store.environment.copyCompacted(to: copy.appendingPathComponent("data.mdb").path)
        }
        let store = try MediaStore(directory: copy, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        #expect(try store.data(forKey: "big") == Data(value))
        #expect(try store.data(forKey: "small") == Data([1, 2, 3]))
        #expect(try store.statistics().entryCount == 2)
        #expect(try store.verify().isClean)
    }

    @Test func aDirectoryThatCannotBeCreatedIsInaccessible() throws {
        defer { try? FileManager.default.removeItem(at: root) }
        let file = root.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let beneathAFile = file.appendingPathComponent("store")
        let error = #expect(throws: StoreError.self) { try MediaStore(directory: beneathAFile) }
        guard case .inaccessible(let path, _) = error else {
            Issue.record("expected .inaccessible, got \(String(describing: error))")
            return
        }
        #expect(path == beneathAFile.path)
        #if os(Linux)
            // Nobody, not even root, can make directories in /proc.
            let inProc = URL(fileURLWithPath: "/proc/mediastore-\(UUID().uuidString)")
            let procError = #expect(throws: StoreError.self) { try MediaStore(directory: inProc) }
            guard case .inaccessible = procError else {
                Issue.record("expected .inaccessible, got \(String(describing: procError))")
                return
            }
        #endif
    }

    /// Permission bits do not bind root (tests in containers often run as
    /// root), so this one runs only for other users.
    @Test(.enabled(if: getuid() != 0, "root ignores directory permissions"))
    func anUnwritableDirectoryIsInaccessible() throws {
        defer {
            chmod(root.path, 0o755)
            try? FileManager.default.removeItem(at: root)
        }
        let directory = root.appendingPathComponent("store")
        do {
            let store = try MediaStore(directory: directory)
            try store.put([1], forKey: "k")
        }
        chmod(directory.path, 0o500)
        defer { chmod(directory.path, 0o755) }
        let error = #expect(throws: StoreError.self) { try MediaStore(directory: directory) }
        guard case .inaccessible = error else {
            Issue.record("expected .inaccessible, got \(String(describing: error))")
            return
        }
        // A read-only directory beneath which a store is to be created.
        chmod(root.path, 0o500)
        let error2 = #expect(throws: StoreError.self) { try MediaStore(directory: root.appendingPathComponent("new")) }
        guard case .inaccessible = error2 else {
            Issue.record("expected .inaccessible, got \(String(describing: error2))")
            return
        }
    }
}
