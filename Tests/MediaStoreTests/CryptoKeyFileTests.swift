import Foundation
import MediaSupport
import TestSupport
import Testing

@testable import MediaStore

/// `StoreKey` never shows its bytes, and `KeyFile` refuses what would
/// leak or misread a key.
@Suite struct CryptoKeyFileTests {
    static let keyBytes: [UInt8] = Array(0xA0..<0xC0)

    @Test func storeKeyTakesExactly32BytesAndHidesThem() throws {
        #expect(throws: StoreKeyError.wrongLength(31)) { try StoreKey(bytes: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: StoreKeyError.wrongLength(33)) { try StoreKey(bytes: [UInt8](repeating: 1, count: 33)) }
        #expect(throws: StoreKeyError.wrongLength(0)) { try StoreKey(bytes: []) }
        let key = try StoreKey(bytes: Data(Self.keyBytes))
        #expect(key.bytes == Self.keyBytes)
        var dumped = ""
        dump(key, to: &dumped)
        for text in [String(describing: key), String(reflecting: key), "\(key)", dumped] {
            #expect(!text.lowercased().contains("a0a1"), "\(text)")
            #expect(!text.contains("160"), "\(text)")
            #expect(text.contains("StoreKey"))
        }
        #expect(Mirror(reflecting: key).children.isEmpty)
        #expect(StoreKey.random().bytes != StoreKey.random().bytes)
        #expect(StoreKey.random().bytes.count == 32)
    }

    static func writeFile(_ directory: TemporaryDirectory, _ name: String, _ bytes: [UInt8], mode: Int) throws -> String
    {
        let path = directory.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, mode_t(mode)) == 0)
        return path
    }

    @Test func readsRawAndHexKeys() throws {
        let directory = try TemporaryDirectory("keyfile")
        defer { directory.remove() }
        let hex = Self.keyBytes.map { String(format: "%02x", $0) }.joined()
        let cases: [(String, [UInt8])] = [
            ("raw", Self.keyBytes),
            ("hex", Array(hex.utf8)),
            ("hex-newline", Array((hex + "\n").utf8)),
            ("hex-crlf", Array((hex.uppercased() + "\r\n").utf8)),
        ]
        for (name, contents) in cases {
            let path = try Self.writeFile(directory, name, contents, mode: 0o600)
            #expect(try KeyFile.read(from: path).bytes == Self.keyBytes, "\(name)")
        }
        let readOnly = try Self.writeFile(directory, "read-only", Self.keyBytes, mode: 0o400)
        #expect(try KeyFile.read(from: readOnly).bytes == Self.keyBytes)
    }

    @Test func refusesOpenModesWrongLengthsAndNonFiles() throws {
        let directory = try TemporaryDirectory("keyfile")
        defer { directory.remove() }
        for mode in [0o640, 0o604, 0o644, 0o660, 0o602, 0o620] {
            let path = try Self.writeFile(directory, "mode-\(mode)", Self.keyBytes, mode: mode)
            #expect(throws: KeyFileError.accessibleByOthers(path: path, mode: UInt32(mode))) {
                try KeyFile.read(from: path)
            }
        }
        for count in [0, 1, 31, 33, 63, 200] {
            let path = try Self.writeFile(
                directory, "length-\(count)", [UInt8](repeating: 0x61, count: count), mode: 0o600)
            #expect(throws: KeyFileError.wrongLength(path: path, count: min(count, 67))) {
                try KeyFile.read(from: path)
            }
        }
        let notHex = try Self.writeFile(
            directory, "not-hex", Array(String(repeating: "g", count: 64).utf8), mode: 0o600)
        #expect(throws: KeyFileError.notHex(path: notHex)) { try KeyFile.read(from: notHex) }
        let folder = directory.path("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        #expect(chmod(folder, 0o700) == 0)
        #expect(throws: KeyFileError.notARegularFile(path: folder)) { try KeyFile.read(from: folder) }
        let missing = directory.path("missing")
        #expect(throws: KeyFileError.cannotOpen(path: missing, reason: String(cString: strerror(ENOENT)))) {
            try KeyFile.read(from: missing)
        }
        let description = KeyFileError.accessibleByOthers(path: "/k", mode: 0o644).description
        #expect(description.contains("644") && description.contains("chmod 600"))
    }

    /// A named pipe given as the key file is refused at once: opening it
    /// for reading must not wait for a writer that never comes.
    @Test func refusesANamedPipeWithoutWaitingForAWriter() throws {
        let directory = try TemporaryDirectory("keyfile")
        defer { directory.remove() }
        let path = directory.path("pipe")
        #expect(mkfifo(path, 0o600) == 0)
        let outcome = Locked<Result<StoreKey, KeyFileError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            outcome.withLock { $0 = Result { () throws(KeyFileError) in try KeyFile.read(from: path) } }
            done.signal()
        }
        let answered = done.wait(timeout: .now() + 5) == .success
        if !answered {
            // Unblock the reader: a writer opens the pipe and closes it.
            let writer = open(path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { _ = close(writer) }
            _ = done.wait(timeout: .now() + 5)
        }
        #expect(answered, "reading a named pipe waited for a writer")
        #expect(outcome.withLock { $0 } == .failure(.notARegularFile(path: path)))
    }

    /// A key file another user owns is refused even with mode 0600: its
    /// owner could replace the key the store is sealed with.
    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func refusesAFileAnotherUserOwns() throws {
        let directory = try TemporaryDirectory("keyfile")
        defer { directory.remove() }
        let path = try Self.writeFile(directory, "theirs", Self.keyBytes, mode: 0o600)
        #expect(chown(path, 4242, 4242) == 0)
        #expect(throws: KeyFileError.ownedByAnotherUser(path: path, owner: 4242)) { try KeyFile.read(from: path) }
        // Through a symbolic link it is the same file, and refused alike.
        let link = directory.path("link")
        #expect(symlink(path, link) == 0)
        #expect(throws: KeyFileError.ownedByAnotherUser(path: link, owner: 4242)) { try KeyFile.read(from: link) }
        #expect(chown(path, geteuid(), getegid()) == 0)
        #expect(try KeyFile.read(from: link).bytes == Self.keyBytes)
    }

    @Test func writesANewFileWithMode0600ThatReadsBack() throws {
        let directory = try TemporaryDirectory("keyfile")
        defer { directory.remove() }
        let key = StoreKey.random()
        let path = directory.path("store.key")
        try KeyFile.write(key, to: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == 65)
        #expect(try KeyFile.read(from: path).bytes == key.bytes)
        // Never overwritten.
        #expect(throws: KeyFileError.exists(path: path)) { try KeyFile.write(StoreKey.random(), to: path) }
        #expect(try KeyFile.read(from: path).bytes == key.bytes)
        let nowhere = directory.path("no/such/folder/key")
        #expect(throws: KeyFileError.cannotWrite(path: nowhere, reason: String(cString: strerror(ENOENT)))) {
            try KeyFile.write(key, to: nowhere)
        }
    }
}
