#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ``StoreKey`` in a file, for `cachetool --key-file`: 32 raw bytes, or
/// 64 hex digits (either case) with an optional line break after them.
///
/// Reading refuses a file that its group or others may read or write (as
/// ssh does for a private key), a file another user owns (its owner could
/// replace the key), a file that is not a regular file (a named pipe is
/// refused at once, without waiting for a writer), and any other length.
/// A symbolic link is followed; the checks apply to the file it names. Writing makes a new file (never replaces one) with
/// mode 0600 holding the key in hex and a line break.
package enum KeyFile {
    /// The most bytes read: a hex key, a CR LF, and one byte to tell a
    /// longer file.
    private static let readLimit = 2 * StoreKey.byteCount + 3

    /// The key in the file at `path`.
    package static func read(from path: String) throws(KeyFileError) -> StoreKey {
        // O_NONBLOCK: opening a named pipe returns at once instead of
        // waiting for a writer; fstat then refuses it. Reads of a regular
        // file do not depend on it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else { throw .cannotOpen(path: path, reason: lastErrorText()) }
        defer { _ = close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotOpen(path: path, reason: lastErrorText()) }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile(path: path) }
        guard status.st_uid == geteuid() else { throw .ownedByAnotherUser(path: path, owner: UInt32(status.st_uid)) }
        let mode = UInt32(status.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .accessibleByOthers(path: path, mode: mode) }
        var bytes = [UInt8](repeating: 0, count: readLimit)
        var count = 0
        while count < readLimit {
            let got = bytes.withUnsafeMutableBytes {
                systemRead(descriptor, $0.baseAddress! + count, readLimit - count)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(path: path, reason: lastErrorText())
            }
            if got == 0 { break }
            count += got
        }
        return try parse(bytes[..<count], path: path)
    }

    /// The key held by `contents`, the bytes of the file at `path`.
    package static func parse(_ contents: ArraySlice<UInt8>, path: String) throws(KeyFileError) -> StoreKey {
        if contents.count == StoreKey.byteCount { return try key(contents, path: path) }
        var text = contents
        if text.last == UInt8(ascii: "\n") { text.removeLast() }
        if text.last == UInt8(ascii: "\r") { text.removeLast() }
        guard text.count == 2 * StoreKey.byteCount else { throw .wrongLength(path: path, count: contents.count) }
        var key = [UInt8]()
        key.reserveCapacity(StoreKey.byteCount)
        var high: UInt8?
        for character in text {
            guard let nibble = hexValue(character) else { throw .notHex(path: path) }
            if let first = high {
                key.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return try Self.key(key[...], path: path)
    }

    /// Writes `key` to a new file at `path`, mode 0600, in hex. Throws
    /// ``KeyFileError/exists(path:)`` if there is a file there already.
    package static func write(_ key: StoreKey, to path: String) throws(KeyFileError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { throw .exists(path: path) }
            throw .cannotWrite(path: path, reason: lastErrorText())
        }
        let digits = Array("0123456789abcdef".utf8)
        let text = key.bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] } + [UInt8(ascii: "\n")]
        var written = 0
        var failure: String?
        // The umask can only take bits away; fchmod makes it exactly 0600.
        if fchmod(descriptor, 0o600) != 0 { failure = lastErrorText() }
        while failure == nil, written < text.count {
            let result = text.withUnsafeBytes {
                systemWrite(descriptor, $0.baseAddress! + written, text.count - written)
            }
            if result < 0 {
                if errno != EINTR { failure = lastErrorText() }
            } else {
                written += result
            }
        }
        if failure == nil, fsync(descriptor) != 0 { failure = lastErrorText() }
        if close(descriptor) != 0, failure == nil { failure = lastErrorText() }
        if let failure {
            _ = unlink(path)
            throw .cannotWrite(path: path, reason: failure)
        }
    }

    private static func key(_ bytes: ArraySlice<UInt8>, path: String) throws(KeyFileError) -> StoreKey {
        do {
            return try StoreKey(bytes: bytes)
        } catch {
            throw .wrongLength(path: path, count: bytes.count)
        }
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func lastErrorText() -> String {
        String(cString: strerror(errno))
    }
}

/// `read(2)`, for code inside ``KeyFile`` where `read` is its method.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// `write(2)`, for code inside ``KeyFile`` where `write` is its method.
private func systemWrite(_ descriptor: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, buffer, count)
}

/// Why a key file could not be read or written.
package enum KeyFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case cannotRead(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    /// A directory, device, socket or pipe.
    case notARegularFile(path: String)
    /// Its group or others may read or write it (`mode`, such as 0o644).
    case accessibleByOthers(path: String, mode: UInt32)
    /// Another user (`owner`, a user id) owns it.
    case ownedByAnotherUser(path: String, owner: UInt32)
    /// It holds neither 32 bytes nor 64 hex digits (`count` bytes, or
    /// more than 67).
    case wrongLength(path: String, count: Int)
    /// 64 characters, not all hex digits.
    case notHex(path: String)
    /// Writing would replace an existing file.
    case exists(path: String)

    package var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open the key file \(path): \(reason)"
        case .cannotRead(let path, let reason): "cannot read the key file \(path): \(reason)"
        case .cannotWrite(let path, let reason): "cannot write the key file \(path): \(reason)"
        case .notARegularFile(let path): "the key file \(path) is not a regular file"
        case .accessibleByOthers(let path, let mode):
            "the key file \(path) has mode \(String(mode, radix: 8)): other users may read it; chmod 600 it"
        case .ownedByAnotherUser(let path, let owner):
            "the key file \(path) belongs to user \(owner), not to this user (\(geteuid())); its owner could replace the key"
        case .wrongLength(let path, let count):
            "the key file \(path) has \(count) bytes; it must hold \(StoreKey.byteCount) bytes or \(2 * StoreKey.byteCount) hex digits"
        case .notHex(let path):
            "the key file \(path) has \(2 * StoreKey.byteCount) characters that are not all hex digits"
        case .exists(let path): "\(path) exists; a key file is never overwritten"
        }
    }
}
