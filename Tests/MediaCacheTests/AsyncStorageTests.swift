import Foundation
import Testing

@testable import MediaCache

@Suite struct AsyncStorageTests {
    @Test func completionAPI() async throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: User.self))
        let user = User(firstName: "John", lastName: "Snow")
        let result: Result<User, Error> = await withCheckedContinuation { continuation in
            storage.async.setObject(user, forKey: "u") { _ in
                storage.async.object(forKey: "u") { result in continuation.resume(returning: result.mapError { $0 }) }
            }
        }
        #expect(try result.get() == user)
        let exists: Bool = await withCheckedContinuation { continuation in
            storage.async.removeObject(forKey: "u") { _ in
                storage.async.objectExists(forKey: "u") { continuation.resume(returning: (try? $0.get()) ?? true) }
            }
        }
        #expect(!exists)
        let missing: Error? = await withCheckedContinuation { continuation in
            storage.async.entry(forKey: "u") { result in
                if case .failure(let error) = result {
                    continuation.resume(returning: error)
                } else {
                    continuation.resume(returning: nil)
                }
            }
        }
        #expect(missing as? StorageError == .notFound)
    }

    @Test func asyncAwaitAPI() async throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: String.self))
        try await storage.async.setObject("v", forKey: "k")
        #expect(try await storage.async.object(forKey: "k") == "v")
        #expect(try await storage.async.entry(forKey: "k").object == "v")
        #expect(try await storage.async.objectExists(forKey: "k"))
        try await storage.async.setObject("old", forKey: "e", expiry: .seconds(-1))
        await #expect(throws: StorageError.notFound) { try await storage.async.object(forKey: "e") }
        #expect(try await storage.async.entry(forKey: "e").object == "old")
        try await storage.async.removeExpiredObjects()
        await #expect(throws: StorageError.notFound) { try await storage.async.entry(forKey: "e") }
        try await storage.async.removeObject(forKey: "k")
        #expect(try await storage.async.objectExists(forKey: "k") == false)
        try await storage.async.setObject("x", forKey: "x")
        try await storage.async.removeAll()
        #expect(storage.allKeys.isEmpty)
    }

    @Test func syncCallInsideCompletionDoesNotDeadlock() async throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let value: Int? = await withCheckedContinuation { continuation in
            storage.async.setObject(1, forKey: "k") { _ in
                try? storage.setObject(2, forKey: "k")
                let read = try? storage.object(forKey: "k")
                DispatchQueue.global().sync { continuation.resume(returning: read) }
            }
        }
        #expect(value == 2)
    }

    @Test func completionsRunInCallOrder() async throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let order = Recorder<Int>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            for index in 0..<50 {
                storage.async.setObject(index, forKey: "k\(index % 5)") { _ in
                    order.append(index)
                    if index == 49 { continuation.resume() }
                }
            }
        }
        #expect(order.events == Array(0..<50))
        #expect(try storage.object(forKey: "k4") == 49)
    }

    @Test func pendingWritesOutliveTheStorage() async throws {
        let temp = ScratchDirectory()
        var storage: Storage<String, Int>? = try makeStorage(
            in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        let done: Result<Void, Error> = await withCheckedContinuation { continuation in
            storage!.async.setObject(1, forKey: "k") { continuation.resume(returning: $0) }
            storage = nil
        }
        #expect(throws: Never.self) { try done.get() }
        let reopened = try makeStorage(in: temp, transformer: TransformerFactory.forCodable(ofType: Int.self))
        #expect(try reopened.object(forKey: "k") == 1)
    }
}
