import Foundation
import Testing

@testable import MediaCache

final class SendableObserver: Sendable {}

/// Upstream crashes when the sync and async APIs are mixed (#249, #250).
// Six minutes: under TSan on 2 cores these run 2–4 minutes (5 s without).
@Suite(.timeLimit(.minutes(6))) struct ConcurrencyTests {
    @Test func mixedSyncAndAsyncFromManyThreads() async throws {
        let temp = ScratchDirectory()
        let storage = try makeStorage(
            in: temp, memoryConfig: MemoryConfig(countLimit: 16),
            transformer: TransformerFactory.forCodable(ofType: Int.self))
        let data = storage.transformData()
        let observer = SendableObserver()
        let events = Recorder<Int>()
        storage.addStorageObserver(observer) { _, _, _ in events.append(0) }
        let group = DispatchGroup()
        let iterations = 400
        for index in 0..<iterations {
            group.enter()
            storage.async.setObject(index, forKey: "k\(index % 40)") { _ in group.leave() }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for index in 0..<iterations / 4 {
                let key = "k\((index + thread) % 40)"
                switch index % 6 {
                case 0: try? storage.setObject(index, forKey: key)
                case 1: _ = try? storage.object(forKey: key)
                case 2: _ = storage.objectExists(forKey: key)
                case 3: _ = try? data.entry(forKey: key)
                case 4:
                    let token = storage.addObserver(observer, forKey: key) { _, _, _ in }
                    token.cancel()
                default: try? storage.removeInMemoryObject(forKey: key)
                }
                if index % 10 == 0 { _ = storage.allKeys }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        for index in 0..<50 { try await storage.async.setObject(index, forKey: "a\(index % 7)") }
        #expect(events.events.count >= iterations)
        #expect(storage.hybridStorage.memoryStorage.count <= 16)
        #expect(try storage.object(forKey: "a0") == 49)
    }
}

/// The storages are `Sendable` exactly when their keys and values are.
@Suite struct SendabilityTests {
    func requireSendable<T: Sendable>(_: T.Type) -> Bool { true }

    @Test func storagesOfSendableTypesAreSendable() {
        #expect(requireSendable(Storage<String, Int>.self))
        #expect(requireSendable(SyncStorage<String, Data>.self))
        #expect(requireSendable(AsyncStorage<URL, [String]>.self))
        #expect(requireSendable(HybridStorage<Int, User>.self))
        #expect(requireSendable(MemoryStorage<String, Int>.self))
        #expect(requireSendable(DiskStorage<String, Int>.self))
        #expect(requireSendable(Transformer<Int>.self))
        #expect(requireSendable(ObservationToken.self))
    }
}
