import Foundation
import MediaStore
import Security
import Synchronization
import Testing

/// `KeychainStoreKey` against the Security stand-in: its in-memory
/// Keychain answers with the documented result codes. Each test names its
/// own service, so tests never share an item; serialized, because a
/// random-source failure the stand-in is told of is not tied to a service.
@Suite(.serialized) struct KeychainStoreKeyTests {
    let keychain = StandInKeychain.shared
    let item = KeychainStoreKey(service: "test.\(UUID().uuidString)", account: "store-a")

    @Test func firstCallCreatesAKeyAndSecondReturnsIt() throws {
        #expect(try item.read() == nil)
        let first = try item.getOrCreate()
        let stored = try #require(keychain.attributes(service: item.service, account: item.account))
        #expect((stored[kSecValueData] as? Data)?.count == StoreKey.byteCount)
        #expect(try StoreKey(bytes: #require(stored[kSecValueData] as? Data)) == first)
        #expect(try item.getOrCreate() == first)
        #expect(try item.read() == first)
    }

    @Test func itemIsAGenericPasswordAccessibleAfterFirstUnlockOnThisDeviceOnly() throws {
        _ = try item.getOrCreate()
        let stored = try #require(keychain.attributes(service: item.service, account: item.account))
        #expect(stored[kSecClass] as? String == kSecClassGenericPassword)
        #expect(stored[kSecAttrAccessible] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly)
        #expect(stored[kSecAttrSynchronizable] as? Bool == false)
        #expect(stored[kSecUseDataProtectionKeychain] as? Bool == true)
    }

    @Test func accountsAreSeparateKeys() throws {
        let other = KeychainStoreKey(service: item.service, account: "store-b")
        #expect(try item.getOrCreate() != other.getOrCreate())
    }

    @Test func defaultsNameTheItem() {
        let defaults = KeychainStoreKey()
        #expect(defaults.service == KeychainStoreKey.defaultService)
        #expect(defaults.account == KeychainStoreKey.defaultAccount)
    }

    @Test func anAddRacedByAnotherCallerReturnsTheStoredKey() throws {
        let winner = KeychainStoreKey(service: item.service, account: item.account)
        let won = Mutex<StoreKey?>(nil)
        keychain.beforeNextAdd(service: item.service) {
            // Another process adds the item between our look-up and our add.
            let key = try? winner.getOrCreate()
            won.withLock { $0 = key }
        }
        let key = try item.getOrCreate()
        let stored = try #require(won.withLock { $0 })
        #expect(key == stored)
        #expect(try item.read() == stored)
    }

    @Test func anUnexpectedStatusIsATypedError() throws {
        keychain.failNext(.copyMatching, service: item.service, status: errSecInteractionNotAllowed)
        #expect(throws: KeychainStoreKeyError.unexpectedStatus(operation: .read, status: errSecInteractionNotAllowed)) {
            try item.getOrCreate()
        }
        #expect(keychain.attributes(service: item.service, account: item.account) == nil)

        keychain.failNext(.add, service: item.service, status: errSecMissingEntitlement)
        #expect(throws: KeychainStoreKeyError.unexpectedStatus(operation: .add, status: errSecMissingEntitlement)) {
            try item.getOrCreate()
        }

        _ = try item.getOrCreate()
        keychain.failNext(.delete, service: item.service, status: errSecInteractionNotAllowed)
        #expect(throws: KeychainStoreKeyError.unexpectedStatus(operation: .delete, status: errSecInteractionNotAllowed))
        {
            try item.delete()
        }
        #expect(try item.read() != nil)
    }

    @Test func anItemThatKeepsComingAndGoingEndsInATypedError() throws {
        // Every add finds the item taken, every look-up finds none: the
        // helper gives up after its bounded attempts instead of looping.
        for _ in 0..<3 { keychain.failNext(.add, service: item.service, status: errSecDuplicateItem) }
        #expect(throws: KeychainStoreKeyError.itemKeepsChanging) { try item.getOrCreate() }
        #expect(try item.read() == nil)
        #expect(try item.getOrCreate() == item.read())
    }

    @Test func aFailedRandomSourceIsATypedErrorAndStoresNothing() throws {
        keychain.failNextRandom(status: -1)
        #expect(throws: KeychainStoreKeyError.randomFailed(status: -1)) { try item.getOrCreate() }
        #expect(keychain.attributes(service: item.service, account: item.account) == nil)
    }

    @Test func anItemThatIsNotAKeyIsRefusedAndKeptAsItIs() throws {
        let attributes: [String: Any] = [
            kSecClass: kSecClassGenericPassword, kSecAttrService: item.service, kSecAttrAccount: item.account,
            kSecValueData: Data(repeating: 7, count: 16),
        ]
        #expect(SecItemAdd(attributes, nil) == errSecSuccess)
        #expect(throws: KeychainStoreKeyError.storedItemWrongLength(16)) { try item.getOrCreate() }
        let stored = try #require(keychain.attributes(service: item.service, account: item.account))
        #expect(stored[kSecValueData] as? Data == Data(repeating: 7, count: 16))
    }

    @Test func deleteThenGetMakesANewKey() throws {
        let first = try item.getOrCreate()
        try item.delete()
        #expect(try item.read() == nil)
        #expect(keychain.attributes(service: item.service, account: item.account) == nil)
        let second = try item.getOrCreate()
        #expect(second != first)
        try item.delete()
        try item.delete()  // deleting what is not there succeeds
    }
}
