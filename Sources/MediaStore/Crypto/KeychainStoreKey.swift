#if canImport(Security)
    import Foundation
    internal import Security

    /// A store's ``StoreKey`` kept in the Keychain as a generic password
    /// item, named by a service and an account the app chooses.
    ///
    /// ``getOrCreate()`` returns the item's key, or makes a new random key
    /// (from `SecRandomCopyBytes`) and stores it when there is none. The
    /// item is accessible after the device's first unlock
    /// (`kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`), so playback
    /// in the background and downloads that resume while the device is
    /// locked can open the store, and it stays on this device: it is not
    /// synchronised through iCloud Keychain and not restored from a backup
    /// onto another device. A store whose key is gone cannot be read, so
    /// deleting the item or restoring onto a new device turns the cache
    /// into one to rebuild. On macOS the item goes into the data
    /// protection keychain (`kSecUseDataProtectionKeychain`), which needs
    /// a signed app with a keychain access group; elsewhere that
    /// attribute changes nothing.
    ///
    /// The Keychain is read and written on the calling thread and may
    /// block; call it once when opening the store, off the main thread.
    public struct KeychainStoreKey: Sendable, Equatable {
        /// The service of the item unless the app names another.
        public static let defaultService = "MediaCache.StoreKey"
        /// The account of the item unless the app names another.
        public static let defaultAccount = "default"

        /// The item's `kSecAttrService`.
        public let service: String
        /// The item's `kSecAttrAccount`: one per store when an app keeps
        /// several encrypted stores.
        public let account: String

        /// The item named by `service` and `account`.
        public init(service: String = defaultService, account: String = defaultAccount) {
            self.service = service
            self.account = account
        }

        /// How often ``getOrCreate()`` looks for the item again when
        /// another process or thread adds or deletes it meanwhile.
        private static let attempts = 3

        /// The item's key, or a new random key stored as the item when
        /// there is none.
        ///
        /// When another thread or process adds the item between the look
        /// and the add, the item it added wins and is returned, so both
        /// callers use one key. An item whose data is not a key
        /// (``KeychainStoreKeyError/storedItemWrongLength(_:)``) is left
        /// alone: replacing it would lose the store it encrypts.
        public func getOrCreate() throws(KeychainStoreKeyError) -> StoreKey {
            for _ in 0..<Self.attempts {
                if let key = try read() { return key }
                let key = try Self.randomKey()
                var attributes = itemQuery()
                attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                attributes[kSecValueData as String] = Data(key.bytes)
                let status = SecItemAdd(attributes as CFDictionary, nil)
                switch status {
                case errSecSuccess: return key
                case errSecDuplicateItem: continue  // added meanwhile: read it
                default: throw .unexpectedStatus(operation: .add, status: status)
                }
            }
            throw .itemKeepsChanging
        }

        /// The item's key, or nil when there is no item.
        public func read() throws(KeychainStoreKeyError) -> StoreKey? {
            var query = itemQuery()
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            switch status {
            case errSecSuccess:
                guard let data = result as? Data else { throw .storedItemWrongLength(0) }
                guard let key = try? StoreKey(bytes: data) else { throw .storedItemWrongLength(data.count) }
                return key
            case errSecItemNotFound: return nil
            default: throw .unexpectedStatus(operation: .read, status: status)
            }
        }

        /// Deletes the item; deleting an item that is not there succeeds.
        /// The store the key encrypts cannot be opened afterwards.
        public func delete() throws(KeychainStoreKeyError) {
            let status = SecItemDelete(itemQuery() as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw .unexpectedStatus(operation: .delete, status: status)
            }
        }

        /// The attributes naming the item, for a look-up, an add and a
        /// delete alike.
        private func itemQuery() -> [String: Any] {
            [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecAttrSynchronizable as String: false,
                kSecUseDataProtectionKeychain as String: true,
            ]
        }

        private static func randomKey() throws(KeychainStoreKeyError) -> StoreKey {
            var bytes = [UInt8](repeating: 0, count: StoreKey.byteCount)
            let status = bytes.withUnsafeMutableBytes {
                SecRandomCopyBytes(kSecRandomDefault, StoreKey.byteCount, $0.baseAddress!)
            }
            guard status == errSecSuccess else { throw .randomFailed(status: status) }
            do {
                return try StoreKey(bytes: bytes)
            } catch {
                preconditionFailure("\(StoreKey.byteCount) random bytes are a key")
            }
        }
    }

    /// Why ``KeychainStoreKey`` could not get, make or delete a key.
    public enum KeychainStoreKeyError: Error, Equatable, Sendable, CustomStringConvertible {
        /// A Keychain call.
        public enum Operation: String, Sendable {
            case read, add, delete
        }

        /// The Keychain answered `status` (an `OSStatus`, such as
        /// `errSecInteractionNotAllowed` before the device's first unlock
        /// or `errSecMissingEntitlement` for an unsigned macOS tool).
        case unexpectedStatus(operation: Operation, status: Int32)
        /// `SecRandomCopyBytes` failed with `status`.
        case randomFailed(status: Int32)
        /// The item holds this many bytes, not a ``StoreKey``'s 32.
        case storedItemWrongLength(Int)
        /// The item was added and deleted by others at every attempt.
        case itemKeepsChanging

        public var description: String {
            switch self {
            case .unexpectedStatus(let operation, let status):
                "the Keychain refused to \(operation.rawValue) the store key item (OSStatus \(status))"
            case .randomFailed(let status): "SecRandomCopyBytes failed (OSStatus \(status))"
            case .storedItemWrongLength(let count):
                "the Keychain item holds \(count) bytes, not a \(StoreKey.byteCount)-byte store key"
            case .itemKeepsChanging: "the Keychain item kept being added and deleted by others"
            }
        }
    }
#endif
