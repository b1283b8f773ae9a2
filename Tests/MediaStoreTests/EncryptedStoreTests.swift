import Foundation
import TestSupport
import Testing

@testable import MediaStore

/// An encrypted store as a whole: created encrypted or plain and refused
/// with the wrong key (or none) before anything is read or changed.
@Suite struct EncryptedStoreTests {
    static let key = try! StoreKey(bytes: Array(0..<32))
    static let otherKey = try! StoreKey(bytes: Array(1...32))

    static func configuration(_ key: StoreKey?) -> StoreConfiguration {
        var configuration = StoreConfiguration(initialMapSize: 64 << 20)
        configuration.encryption = key.map { StoreConfiguration.Encryption(key: $0) }
        return configuration
    }

    static func dataBytes(_ directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
    }

    /// The format version in the store's meta.
    static func formatVersion(_ store: MediaStore) throws -> UInt16? {
        try store.read { transaction in
            try transaction.txn.value(store.databases.meta, key: Array("format".utf8)).flatMap {
                StoreFormat.version(of: $0)
            }
        }
    }

    @Test func wrongKeyOrNoKeyIsRefusedWithoutSideEffects() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        var random = SplitMix64(seed: 1)
        let big = random.bytes(600_000)
        try test.store.put(big, forKey: "https://example.com/big.mp3")
        try test.store.put(Array("small value".utf8), forKey: "small")
        #expect(try Self.formatVersion(test.store) == StoreFormat.encryptedVersion)
        test.store.close()
        let before = try Self.dataBytes(test.directory)

        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.otherKey))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: true)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(nil))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: true)) {
            try MediaStore.openReadOnly(directory: test.directory)
        }
        #expect(throws: StoreError.wrongKey(path: test.directory.path)) {
            try MediaStore.openReadOnly(directory: test.directory, key: Self.otherKey)
        }
        #expect(try Self.dataBytes(test.directory) == before)

        let reader = try MediaStore.openReadOnly(directory: test.directory, key: Self.key)
        #expect(try reader.data(forKey: "https://example.com/big.mp3") == Data(big))
        reader.close()
        try test.reopen(configuration: Self.configuration(Self.key))
        #expect(try test.store.data(forKey: "https://example.com/big.mp3") == Data(big))
        #expect(try test.store.data(forKey: "small") == Data("small value".utf8))
    }

    @Test func plainStoreWithAKeyIsRefusedWithoutSideEffects() throws {
        let test = try TestStore(configuration: Self.configuration(nil))
        try test.store.put(Array("plain".utf8), forKey: "k")
        #expect(try Self.formatVersion(test.store) == StoreFormat.version)
        test.store.close()
        let before = try Self.dataBytes(test.directory)
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: false)) {
            try MediaStore(directory: test.directory, configuration: Self.configuration(Self.key))
        }
        #expect(throws: StoreError.encryptionMismatch(path: test.directory.path, storeIsEncrypted: false)) {
            try MediaStore.openReadOnly(directory: test.directory, key: Self.key)
        }
        #expect(try Self.dataBytes(test.directory) == before)
        try test.reopen(configuration: Self.configuration(nil))
        #expect(try test.store.data(forKey: "k") == Data("plain".utf8))
    }

    /// The key check value is salted with the store's id: two stores
    /// under one key hold different values.
    @Test func keyCheckValueIsSaltedWithTheStoreID() throws {
        let first = try TestStore(configuration: Self.configuration(Self.key))
        let second = try TestStore(configuration: Self.configuration(Self.key))
        func row(_ store: MediaStore) throws -> [UInt8]? {
            try store.read { try $0.txn.value(store.databases.meta, key: EncryptionRow.key) }
        }
        let firstRow = try #require(try row(first.store))
        let secondRow = try #require(try row(second.store))
        #expect(firstRow.count == EncryptionRow.size)
        #expect(firstRow != secondRow)
        #expect(
            EncryptionRow(firstRow)?.keyCheckValue
                == first.store.encryption?.keyCheckValue(storeID: first.store.keySeed))
        #expect(try row(TestStore(configuration: Self.configuration(nil)).store) == nil)
    }

    /// Compaction copies an encrypted store's bytes without its key, and
    /// the copy opens with the key.
    @Test func compactionNeedsNoKey() throws {
        let test = try TestStore(configuration: Self.configuration(Self.key))
        var random = SplitMix64(seed: 2)
        let bytes = random.bytes(300_000)
        try test.store.put(bytes, forKey: "a")
        test.store.close()
        _ = try MediaStore.compact(directory: test.directory)
        try test.reopen(configuration: Self.configuration(Self.key))
        #expect(try test.store.data(forKey: "a") == Data(bytes))
    }
}
