import Foundation
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// When a player's first bytes reach it: as soon as the origin sent them,
/// whatever else the first response sets in motion (the new entry's
/// commit among them), and what of them is stored once that entry exists.
///
/// Every wait is bounded (`eventually`), and every gate is opened when a
/// test ends, so that a test ends by itself whatever it finds.
@Suite("First bytes", .timeLimit(.minutes(1)))
struct FirstBytesTests {
    static let chunkSize = 16 * 1024
    /// The in-memory origin's body piece.
    static let pieceSize = 8192

    private func makeStore() throws -> (MediaStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "first-bytes-\(UUID().uuidString)")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return (store, directory)
    }

    /// Waits for `body` (bounded: an issue naming `what` is recorded when it
    /// has not ended within `eventually`'s time; it is then left running).
    private func within(_ what: String, _ body: @escaping @Sendable () async -> Void) async {
        let ended = Flag()
        Task {
            await body()
            ended.set()
        }
        await eventually(what) { ended.isSet }
    }

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }

    /// Whether `bytes` are `expected`: a plain comparison (a failed `==` of
    /// large `Data` in `#expect` makes the test library diff them, for minutes).
    private func same(_ bytes: Data, _ expected: Data) -> Bool { bytes == expected }

    /// Whether `handle` has finished or failed (then its outcome, read
    /// without waiting, is final).
    private func ended(_ handle: PlayerSimulator.Handle) -> Bool {
        handle.state.withLock { $0.outcome.finished || $0.outcome.error != nil }
    }

    @Test("An origin that sends a first piece and holds: the reader has that piece before the hold ends")
    func firstPieceBeforeTheRest() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 777, seed: 27)
        // 8 KiB pieces: the first is half a chunk, and a fraction of the request.
        let origin = FakeOrigin(serving: content, holdFirstBody: true)
        defer { origin.releaseFirstBody() }
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/first-piece.bin")!)
        let play = PlayerSimulator(loader: loader).start(contentInformation: true, offset: 0, length: nil)
        await eventually("the first piece reached the reader while the origin held the rest") {
            play.received >= Self.pieceSize
        }
        #expect(same(play.state.withLock { $0.outcome.data }, content.prefix(Self.pieceSize)))
        #expect(play.state.withLock { $0.outcome.finished } == false)
        origin.releaseFirstBody()
        await eventually("the play ended") { ended(play) }
        let outcome = play.state.withLock { $0.outcome }
        #expect(outcome.error == nil)
        #expect(same(outcome.data, content))
    }

    @Test(
        "A store slow to prepare the first response's entry: the first bytes reach the reader before it is ready, and are stored after"
    )
    func firstBytesBeforeTheEntryIsPrepared() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 1234, seed: 41)
        let gate = AsyncGate()
        defer { gate.open() }
        let origin = FakeOrigin(serving: content)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "first-play.bin",
            preparation: { await gate.pass() })
        let (url, loader, player) = (fixture.url, fixture.loader, fixture.player)
        // The first chunk (two pieces): all of it arrives before the entry exists.
        let wanted = Self.chunkSize
        let first = player.start(contentInformation: true, offset: 0, length: wanted)
        await eventually("the entry's preparation began") { gate.arrivalCount == 1 }
        await eventually("the first bytes reached the reader while the entry was being prepared") {
            first.received >= wanted
        }
        #expect(same(first.state.withLock { $0.outcome.data }, content.prefix(wanted)))
        #expect(try store.info(forKey: loader.cacheKey) == nil)
        gate.open()
        await eventually("the opening request ended") { ended(first) }
        let opening = first.state.withLock { $0.outcome }
        #expect(opening.error == nil)
        #expect(opening.information?.contentLength == content.count)
        #expect(same(opening.data, content.prefix(wanted)))
        // What arrived before the entry existed was stored once it did:
        // the whole resource comes from the origin exactly once.
        let whole = player.start(offset: 0, length: nil)
        await eventually("the whole play ended") { ended(whole) }
        #expect(same(whole.state.withLock { $0.outcome }.data, content))
        await eventually("the entry is complete") {
            (try? store.info(forKey: loader.cacheKey))??.isComplete == true
        }
        #expect(same(try store.read(forKey: loader.cacheKey, range: 0..<content.count), content))
        #expect(origin.bodyBytes(for: url) == content.count)
    }

    @Test(
        "A probe abandoned while its entry is prepared, then a second probe: the first preparation's late end leaves the second's alone, and every chunk of the second is stored"
    )
    func secondProbeWhileTheFirstPreparationIsHeld() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 321, seed: 43)
        // The first request gets its head and no body byte (its type, generic,
        // stays unknown: the probe resolves nothing); every later response
        // sends its first piece, then holds until released.
        let origin = FakeOrigin(
            versions: [FakeOrigin.Version(bytes: content)], holdAfter: [0: Self.pieceSize],
            fault: .stallAfter(bytes: 0), times: 1)
        let first = AsyncGate()
        let second = AsyncGate()
        defer {
            first.open()
            second.open()
            origin.release(0)
        }
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "second-probe.bin", stallTimeout: .seconds(120),
            preparation: AsyncGate.firstThenSecond(first, second))
        let (url, loader, fetcher, player) = (fixture.url, fixture.loader, fixture.fetcher, fixture.player)

        let abandoned = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the first probe's entry is being prepared") { first.arrivalCount == 1 }
        // A cancelled request is not answered: its probe, without a waiter, is let go.
        player.cancel(abandoned)
        await eventually("the abandoned probe was let go") { await fetcher.transfers.isEmpty }

        let play = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the second probe's first piece reached its reader") { play.received >= Self.pieceSize }
        // The first preparation ends (its entry is committed) while the second's is still to come.
        first.open()
        await eventually("the first preparation's entry was committed") {
            (try? store.info(forKey: loader.cacheKey)) != nil
        }
        await eventually("the second probe's entry is being prepared") { second.arrivalCount == 1 }
        // The abandoned probe's preparation bound nothing.
        #expect(await fetcher.entryVersion == nil)
        // The second probe's first whole chunk comes after that end.
        origin.release(0)
        await eventually("the second probe's first chunk reached its reader") { play.received >= Self.chunkSize }
        #expect(try store.cachedRanges(forKey: loader.cacheKey).isEmpty)
        second.open()
        await eventually("the play ended") { ended(play) }
        let outcome = play.state.withLock { $0.outcome }
        #expect(outcome.error == nil)
        #expect(same(outcome.data, content))
        // None of its chunks was dropped: the entry is complete without another request.
        await eventually("the entry is complete") {
            (try? store.info(forKey: loader.cacheKey))??.isComplete == true
        }
        #expect(same(try store.read(forKey: loader.cacheKey, range: 0..<content.count), content))
        #expect(await fetcher.cachingSkipped == nil)
        #expect(await fetcher.entryVersion == (try store.info(forKey: loader.cacheKey))?.version)
        #expect(origin.bodyBytes(for: url) == content.count)
    }

    @Test(
        "A probe abandoned while its entry is prepared, then the content changes: its late preparation binds nothing, and the new version's entry is not touched"
    )
    func abandonedProbeAfterAChange() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = FakeOrigin.content(count: 4 * Self.chunkSize + 99, seed: 51)
        let new = FakeOrigin.content(count: 6 * Self.chunkSize + 555, seed: 52)
        let origin = FakeOrigin(
            versions: [FakeOrigin.Version(bytes: old, etag: "\"v1\""), FakeOrigin.Version(bytes: new, etag: "\"v2\"")],
            fault: .stallAfter(bytes: 0), times: 1)
        let first = AsyncGate()
        let second = AsyncGate()
        defer {
            first.open()
            second.open()
        }
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "changed.bin", stallTimeout: .seconds(120),
            preparation: AsyncGate.firstThenSecond(first, second))
        let (loader, fetcher, player) = (fixture.loader, fixture.fetcher, fixture.player)

        let abandoned = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the first probe's entry is being prepared") { first.arrivalCount == 1 }
        player.cancel(abandoned)
        await eventually("the abandoned probe was let go") { await fetcher.transfers.isEmpty }
        origin.change(to: 1)

        // The new version's gate is open: its preparation runs once the held one has ended.
        second.open()
        let play = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the new version's first chunk reached its reader") { play.received >= Self.chunkSize }
        #expect(same(play.state.withLock { $0.outcome.data.prefix(Self.chunkSize) }, new.prefix(Self.chunkSize)))
        first.open()
        await eventually("the play ended") { ended(play) }
        let outcome = play.state.withLock { $0.outcome }
        #expect(outcome.error == nil)
        #expect(outcome.information?.contentLength == new.count)
        #expect(same(outcome.data, new))
        await eventually("the new version's entry is complete") {
            (try? store.info(forKey: loader.cacheKey))??.isComplete == true
        }
        let info = try #require(try store.info(forKey: loader.cacheKey))
        #expect(info.metadata.etag == "\"v2\"")
        #expect(info.length == new.count)
        #expect(same(try store.read(forKey: loader.cacheKey, range: 0..<new.count), new))
        #expect(await fetcher.cachingSkipped == nil)
        #expect(await fetcher.entryVersion == info.version)
        // A later reader is served the new version from the store alone.
        let requests = origin.requestCount
        let again = player.start(offset: 0, length: nil)
        await eventually("the second play ended") { ended(again) }
        #expect(same(again.state.withLock { $0.outcome }.data, new))
        #expect(origin.requestCount == requests)
    }

    @Test(
        "The content changes while the new entry is being prepared: the preparation binds nothing, its entry is dropped once made, and the next play stores the new version"
    )
    func contentChangedWhileTheEntryIsPrepared() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let old = FakeOrigin.content(count: 12 * Self.chunkSize + 77, seed: 61)
        let new = FakeOrigin.content(count: 12 * Self.chunkSize + 901, seed: 62)
        let origin = FakeOrigin(versions: [
            FakeOrigin.Version(bytes: old, etag: "\"v1\""), FakeOrigin.Version(bytes: new, etag: "\"v2\""),
        ])
        let first = AsyncGate()
        let second = AsyncGate()
        second.open()
        defer { first.open() }
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "changing.bin",
            preparation: AsyncGate.firstThenSecond(first, second))
        let (url, loader, fetcher, player) = (fixture.url, fixture.loader, fixture.fetcher, fixture.player)

        let play = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the old version's first chunk reached its reader") { play.received >= Self.chunkSize }
        await eventually("the old version's preparation is held") { first.arrivalCount == 1 }
        origin.change(to: 1)
        // A seek past what the probe would bring soon starts a transfer of
        // its own, whose answer carries the new validator.
        let seek = player.start(offset: 10 * Self.chunkSize, length: nil)
        await eventually("the change was seen") { await fetcher.information == nil }
        // The old entry is dropped once made, then the readers fail.
        first.open()
        await eventually("both readers failed") { ended(play) && ended(seek) }
        #expect(play.state.withLock { $0.outcome.error } == .resourceChanged(url: url))
        #expect(seek.state.withLock { $0.outcome.error } == .resourceChanged(url: url))
        await within("the change was handled") { await fetcher.changeHandled() }
        // The preparation has ended (its commit is in the store, unless dropped).
        let preparation = await fetcher.lastPreparation
        await within("the preparation ended") { await preparation?.done() }
        // The old version's entry, made after the change, was dropped; nothing was bound to it.
        #expect(try store.info(forKey: loader.cacheKey) == nil)
        #expect(await fetcher.entryVersion == nil)

        let again = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("the play after the change ended") { ended(again) }
        let outcome = again.state.withLock { $0.outcome }
        #expect(outcome.error == nil)
        #expect(same(outcome.data, new))
        await eventually("the new version's entry is complete") {
            (try? store.info(forKey: loader.cacheKey))??.isComplete == true
        }
        let info = try #require(try store.info(forKey: loader.cacheKey))
        #expect(info.metadata.etag == "\"v2\"")
        #expect(same(try store.read(forKey: loader.cacheKey, range: 0..<new.count), new))
        #expect(await fetcher.cachingSkipped == nil)
    }
}
