import Foundation
import MediaStore
import Security
import Testing

// The Swift block of MediaStore.docc/EncryptionAtRest.md, compiled as shown
// against the Security stand-in (`Tools/check-docs` fails when a block of
// the documents is not one of these regions).
// snippet: keychain-key (Sources/MediaStore/MediaStore.docc/EncryptionAtRest.md)
/// The downloads store's key: made on first launch, the same ever after.
func downloadsStoreKey() throws -> StoreKey {
    try KeychainStoreKey(service: "com.example.player.cache", account: "downloads").getOrCreate()
}
// end snippet

// In the helper's suite: its tests run one at a time (the stand-in's random
// source failure is the process's).
extension KeychainStoreKeyTests {
    @Test func theArticlesFunctionReturnsOneKeyEveryTime() throws {
        let item = KeychainStoreKey(service: "com.example.player.cache", account: "downloads")
        defer { try? item.delete() }
        let first = try downloadsStoreKey()
        #expect(try downloadsStoreKey() == first)
        #expect(try item.read() == first)
    }
}
