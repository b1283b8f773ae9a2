import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// ``ResourceLoader/events()`` registers its stream's observer and arranges
/// its removal before it returns the stream: a stream dropped at once
/// leaves no observer behind in the resource's fetcher.
@Suite("Resource loader events", .timeLimit(.minutes(2)))
struct ResourceLoaderEventsTests {
    @Test func aStreamDroppedAtOnceLeavesNoObserver() async throws {
        let test = try TestCache(origin: FakeOrigin(serving: Data(repeating: 7, count: 1000)))
        let loader = test.cache.loader(for: URL(string: "http://origin.invalid/a.bin")!)
        let fetcher = loader.fetcher
        let (registered, signal) = AsyncStream<Void>.makeStream()
        test.configuration.fetcherHooks.observerRegistered.withLock { $0 = { signal.yield() } }
        var registrations = registered.makeAsyncIterator()
        for round in 0..<20 {
            do { _ = loader.events() }  // dropped before anything else runs
            // Wait until its observer was registered, then it must be gone.
            _ = await registrations.next()
            #expect(fetcher.observerCount == 0, "round \(round): the dropped stream's observer stays")
        }
        test.configuration.fetcherHooks.observerRegistered.withLock { $0 = nil }
    }

    @Test func aKeptStreamStaysRegisteredUntilDropped() async throws {
        let test = try TestCache(origin: FakeOrigin(serving: Data(repeating: 7, count: 1000)))
        let loader = test.cache.loader(for: URL(string: "http://origin.invalid/b.bin")!)
        var events: AsyncStream<ResourceEvent>? = loader.events()
        #expect(loader.fetcher.observerCount == 1)
        _ = try await loader.contentInformation()
        var iterator = events?.makeAsyncIterator()
        guard case .ready = await iterator?.next() else {
            Issue.record("no ready event")
            return
        }
        iterator = nil
        events = nil
        #expect(loader.fetcher.observerCount == 0)
    }
}
