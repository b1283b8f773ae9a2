import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// The shared cache opens its store through `MediaStore.shared` and never
/// stops the app when it cannot: it plays without caching and says why.
@Suite("Shared cache")
struct SharedCacheTests {
    private func temporaryURL(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString)")
    }

    @Test("A directory the app already opened is shared, not reopened")
    func sharesAnOpenStore() throws {
        let directory = temporaryURL("shared-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore.shared(directory: directory)
        let cache = StreamingCache.makeShared(directory: directory)
        #expect(cache.store === store)
        #expect(cache.storeOpeningError == nil)
    }

    @Test("A store that cannot open: the cache plays from the origin without caching and reports why")
    func unusableStorePlaysUncached() async throws {
        // A regular file where the store's directory should be.
        let path = temporaryURL("not-a-directory")
        try Data("not a store".utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let content = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let cache = StreamingCache.makeShared(directory: path, origin: FakeOrigin(serving: content))
        #expect(cache.storeOpeningError != nil)

        let loader = cache.loader(for: URL(string: "https://origin.example/track.bin")!)
        let player = PlayerSimulator(loader: loader)
        let whole = await player.load(contentInformation: true, offset: 0, length: content.count)
        #expect(whole.error == nil)
        #expect(whole.data == content)
        let reason = try #require(await loader.cachingSkippedReason)
        #expect(reason.contains("could not open"))
        do {
            try await loader.downloadAll()
            Issue.record("a download into an unusable store succeeded")
        } catch {
            guard case .notCacheable = error else {
                Issue.record("expected notCacheable, got \(error)")
                return
            }
        }
        #expect(try cache.store.entries().isEmpty)
    }
}
