import Foundation
import MediaCache
import Testing

/// The code examples of hyperoslo/Cache's README, compiled against
/// MediaCache (adapted only where they are broken upstream: a `switch` over
/// `StorageChange` needs `.removeInMemory`, `entry.meta` does not exist).
@Suite struct ReadmeExampleTests {
    struct User: Codable {
        let firstName: String
        let lastName: String
    }

    final class Controller {
        var log: [String] = []
    }

    @Test func readmeExamples() async throws {
        let temp = ScratchDirectory()
        let diskConfig = DiskConfig(name: "Floppy", directory: temp.url)
        let memoryConfig = MemoryConfig(expiry: .never, countLimit: 10, totalCostLimit: 10)

        let storage = try? Storage<String, User>(
            diskConfig: diskConfig,
            memoryConfig: memoryConfig,
            transformer: TransformerFactory.forCodable(ofType: User.self)  // Storage<String, User>
        )
        let storage7 = try? Storage<String, User>(
            diskConfig: diskConfig, memoryConfig: memoryConfig, fileManager: FileManager.default,
            transformer: TransformerFactory.forCodable(ofType: User.self))
        #expect(storage != nil && storage7 != nil)
        guard let storage else { return }

        let memory = MemoryStorage<String, User>(config: memoryConfig)
        let disk = try DiskStorage<String, User>(
            config: diskConfig, transformer: TransformerFactory.forCodable(ofType: User.self))
        let hybridStorage = HybridStorage(memoryStorage: memory, diskStorage: disk)
        _ = Storage(hybridStorage: hybridStorage)

        let user = User(firstName: "John", lastName: "Snow")
        try? storage.setObject(user, forKey: "character")

        let stringStorage = storage.transformCodable(ofType: String.self)
        let intStorage = storage.transformCodable(ofType: Int.self)
        let arrayStorage = storage.transformCodable(ofType: [String].self)
        let dataStorage = storage.transformData()
        let urlStorage = storage.transformCodable(ofType: URL.self)
        let data = Data([1, 2, 3])
        let authorizeURL = URL(string: "https://example.com/authorize")!

        // Save to storage
        try? intStorage.setObject(10, forKey: "score")
        try? stringStorage.setObject("Oslo", forKey: "my favorite city", expiry: .never)
        try? arrayStorage.setObject(["alert", "sounds", "badge"], forKey: "notifications")
        try? dataStorage.setObject(data, forKey: "a bunch of bytes")
        try? urlStorage.setObject(authorizeURL, forKey: "authorization URL")

        // Load from storage
        let score = try? intStorage.object(forKey: "score")
        let favoriteCharacter = try? stringStorage.object(forKey: "my favorite city")
        #expect(score == 10 && favoriteCharacter == "Oslo")

        // Check if an object exists
        let hasFavoriteCharacter = stringStorage.objectExists(forKey: "my favorite city")
        #expect(hasFavoriteCharacter)

        let entry = try? stringStorage.entry(forKey: "my favorite city")
        print(entry?.object as Any)
        print(entry?.expiry as Any)

        // Default expiry date from configuration will be applied to the item
        try? stringStorage.setObject("This is a string", forKey: "string")
        // A given expiry date will be applied to the item
        try? stringStorage.setObject(
            "This is a string", forKey: "string", expiry: .date(Date().addingTimeInterval(2 * 3600)))

        stringStorage.async.setObject("Oslo", forKey: "my favorite city") { result in
            switch result {
            case .success: print("saved successfully")
            case .failure(let error): print(error)
            }
        }
        stringStorage.async.object(forKey: "my favorite city") { result in
            switch result {
            case .success(let city): print("my favorite city is \(city)")
            case .failure(let error): print(error)
            }
        }
        stringStorage.async.objectExists(forKey: "my favorite city") { result in
            if case .success(let exists) = result, exists { print("I have a favorite city") }
        }
        do {
            try await stringStorage.async.setObject("Oslo", forKey: "my favorite city")
            print("saved successfully")
        } catch {
            print(error)
        }
        do {
            let city = try await stringStorage.async.object(forKey: "my favorite city")
            print("my favorite city is \(city)")
        } catch {
            print(error)
        }

        let controller = Controller()
        let token = storage.addStorageObserver(controller) { observer, storage, change in
            switch change {
            case .add(let key): observer.log.append("Added \(key)")
            case .remove(let key): observer.log.append("Removed \(key)")
            case .removeAll: observer.log.append("Removed all")
            case .removeExpired: observer.log.append("Removed expired")
            case .removeInMemory(let key): observer.log.append("Removed in memory \(key)")
            }
        }
        let key = "user1"
        let keyToken = storage.addObserver(controller, forKey: key) { observer, storage, change in
            switch change {
            case .edit(let before, let after):
                observer.log.append("Changed object for \(key) from \(String(describing: before)) to \(after)")
            case .remove:
                observer.log.append("Removed \(key)")
            }
        }
        try? storage.setObject(user, forKey: key)
        token.cancel()
        keyToken.cancel()
        storage.removeAllStorageObservers()
        storage.removeObserver(forKey: key)
        storage.removeAllKeyObservers()
        #expect(controller.log.count == 2)

        let json = #"{"firstName": "Arya", "lastName": "Stark"}"#
        let decoded = try JSONDecoder.decode(json, to: User.self)
        try storage.setObject(decoded, forKey: "most favorite character")

        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            storage.async.removeExpiredObjects { _ in
                storage.async.removeAll { result in
                    switch result {
                    case .success: print("removal completes")
                    case .failure(let error): print(error)
                    }
                    continuation.resume()
                }
            }
        }
        try? storage.removeObject(forKey: "my favorite city")
        try? storage.removeAll()
        try? storage.removeExpiredObjects()
        #expect(storage.allKeys.isEmpty)
    }
}
