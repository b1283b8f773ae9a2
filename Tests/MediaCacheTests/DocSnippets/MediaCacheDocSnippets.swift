import Foundation
import MediaCache
import Testing

/// The Swift blocks of the README's MediaCache quick start and of
/// MediaCache.docc/GettingStarted.md, compiled as shown: `Tools/check-docs`
/// fails when a block of the documents is not one of these regions. The
/// quick start also runs.
@Suite struct MediaCacheDocSnippets {
    @Test func readmeQuickStartStoresAndReadsBack() throws {
        let scratch = ScratchDirectory()
        let (lastName, bytes) = try Self.readmeQuickStart(cachesURL: scratch.url)
        #expect(lastName == "Snow")
        let json = try #require(String(data: bytes, encoding: .utf8))
        #expect(json.contains("\"firstName\":\"John\""))
    }

    static func readmeQuickStart(cachesURL: URL) throws -> (String, Data) {
        // snippet: readme-cache-drop-in (README.md)
        struct User: Codable {
            let firstName: String
            let lastName: String
        }

        let storage = try Storage<String, User>(
            diskConfig: DiskConfig(name: "Floppy", directory: cachesURL),
            memoryConfig: MemoryConfig(expiry: .never, countLimit: 10, totalCostLimit: 10),
            transformer: TransformerFactory.forCodable(ofType: User.self))
        try storage.setObject(User(firstName: "John", lastName: "Snow"), forKey: "character")
        let character = try storage.object(forKey: "character")
        let bytes = storage.transformData()  // the same store, for another value type
        // end snippet
        return (character.lastName, try bytes.object(forKey: "character"))
    }

    final class GettingStarted {
        func all() async throws {
            // snippet: cache-storage (Sources/MediaCache/MediaCache.docc/GettingStarted.md)
            struct User: Codable {
                let firstName: String
                let lastName: String
            }

            let storage = try Storage<String, User>(
                diskConfig: DiskConfig(name: "Floppy", expiry: .seconds(7 * 24 * 3600), maxSize: 50 << 20),
                memoryConfig: MemoryConfig(expiry: .seconds(600), countLimit: 100, totalCostLimit: 8 << 20),
                transformer: TransformerFactory.forCodable(ofType: User.self)
            )
            // end snippet
            // snippet: cache-read-write (Sources/MediaCache/MediaCache.docc/GettingStarted.md)
            try storage.setObject(User(firstName: "John", lastName: "Snow"), forKey: "user")
            let user = try storage.object(forKey: "user")  // StorageError.notFound when missing or expired
            let entry = try storage.entry(forKey: "user")  // expired entries too: check entry.expiry

            try await storage.async.setObject(user, forKey: "user", expiry: .date(Date().addingTimeInterval(3600)))
            // end snippet
            // snippet: cache-transform (Sources/MediaCache/MediaCache.docc/GettingStarted.md)
            let tracks: Storage<String, Data> = storage.transformData()
            let scores = storage.transformCodable(ofType: Int.self)
            // end snippet
            // snippet: cache-observers (Sources/MediaCache/MediaCache.docc/GettingStarted.md)
            let token = storage.addStorageObserver(self) { observer, storage, change in
                print(change)
            }
            token.cancel()
            // end snippet
            _ = (entry, tracks, scores)
        }
    }
}
