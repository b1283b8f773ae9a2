/// The 256-bit secret that encrypts a store at rest, supplied by the app
/// (from the Keychain, a key file, a key server).
///
/// Its description, debug description and mirror never show the bytes,
/// so logging a configuration or printing it in a debugger does not leak
/// the key. The bytes live in ordinary memory: Swift gives no way to
/// scrub every copy, so keep the process's memory as safe as the key.
public struct StoreKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The length of a key in bytes.
    public static let byteCount = 32

    /// The key's bytes, for deriving subkeys and for writing a key file.
    package let bytes: [UInt8]

    /// A key from exactly ``byteCount`` bytes; any other length throws
    /// ``StoreKeyError/wrongLength(_:)``.
    public init(bytes: some Collection<UInt8>) throws(StoreKeyError) {
        guard bytes.count == Self.byteCount else { throw .wrongLength(bytes.count) }
        self.bytes = Array(bytes)
    }

    /// A new key from the platform's cryptographically secure generator
    /// (CryptoKit on Apple platforms, OpenSSL's `RAND_bytes` elsewhere).
    public static func random() -> StoreKey {
        StoreKey(checked: CryptoPrimitives.randomBytes(byteCount))
    }

    private init(checked bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    /// Whether two keys are the same, in time that does not depend on
    /// where they differ.
    public static func == (lhs: StoreKey, rhs: StoreKey) -> Bool {
        constantTimeEquals(lhs.bytes, rhs.bytes)
    }

    public var description: String { "StoreKey(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Why bytes are not a ``StoreKey``.
public enum StoreKeyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key had this many bytes instead of ``StoreKey/byteCount``.
    case wrongLength(Int)

    public var description: String {
        switch self {
        case .wrongLength(let count): "a store key has \(StoreKey.byteCount) bytes, not \(count)"
        }
    }
}
