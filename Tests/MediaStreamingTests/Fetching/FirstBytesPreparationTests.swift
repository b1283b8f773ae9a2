import Foundation
import MediaSupport
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// A preparation of the new entry that is slow, refused or begun again,
/// while the first bytes go on to the player.
@Suite("First bytes: a slow, refused or repeated entry preparation", .timeLimit(.minutes(1)))
struct FirstBytesPreparationTests {
    static let chunkSize = 16 * 1024

    private func makeStore(sizeLimit: Int = 0) throws -> (MediaStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fbr-\(UUID().uuidString)")
        let store = try MediaStore(
            directory: directory,
            configuration: StoreConfiguration(sizeLimit: sizeLimit, chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return (store, directory)
    }

    private func ended(_ handle: PlayerSimulator.Handle) -> Bool {
        handle.state.withLock { $0.outcome.finished || $0.outcome.error != nil }
    }

    /// The commit is held three times the stall timeout (a stall timeout
    /// long enough that the suite's load alone does not reach it).
    @Test("A commit slower than stallTimeout: no retry, every byte fetched once")
    func slowCommitIsNoStall() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 1234, seed: 71)
        let gate = AsyncGate()
        defer { gate.open() }
        let origin = FakeOrigin(serving: content)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "slow-commit.bin", stallTimeout: .milliseconds(1500),
            preparation: { await gate.pass() })
        let (url, loader) = (fixture.url, fixture.loader)
        let play = PlayerSimulator(loader: loader).start(contentInformation: true, offset: 0, length: nil)
        await eventually("first chunk") { play.received >= Self.chunkSize }
        try await Task.sleep(for: .milliseconds(4500))
        gate.open()
        await eventually("ended") { ended(play) }
        #expect(play.state.withLock { $0.outcome.error } == nil)
        #expect(play.state.withLock { $0.outcome.data } == content)
        #expect(loader.statistics.retries == 0)
        #expect(origin.bodyBytes(for: url) == content.count)
    }

    /// A download's probe waits for its entry before its first body byte
    /// (a store slow to commit): that wait is on the store, not the origin.
    /// The preparation is held three times the stall timeout.
    @Test(
        "A download's probe waiting longer than stallTimeout for its entry: no stall, no retry, every byte fetched once"
    )
    func slowPreparationBeforeTheBodyIsNoStall() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 77, seed: 75)
        let gate = AsyncGate()
        defer { gate.open() }
        let origin = FakeOrigin(serving: content)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "slow-download.bin", stallTimeout: .milliseconds(1500),
            preparation: { await gate.pass() })
        let (url, loader) = (fixture.url, fixture.loader)
        let download = Task { try await loader.downloadAll() }
        await eventually("the entry is being prepared") { gate.arrivalCount == 1 }
        try await Task.sleep(for: .milliseconds(4500))
        gate.open()
        _ = try await download.value
        #expect(loader.statistics.retries == 0)
        #expect(try store.info(forKey: loader.cacheKey)?.isComplete == true)
        #expect(try store.read(forKey: loader.cacheKey, range: 0..<content.count) == content)
        #expect(origin.bodyBytes(for: url) == content.count)
    }

    @Test("the preparation is refused (too large) after the first bytes went out: the play ends uncached, intact")
    func refusedPreparation() async throws {
        let (store, directory) = try makeStore(sizeLimit: 40_000)
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 1234, seed: 72)
        let gate = AsyncGate()
        defer { gate.open() }
        let origin = FakeOrigin(serving: content)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "refused.bin",
            preparation: { await gate.pass() })
        let (loader, player) = (fixture.loader, fixture.player)
        let play = player.start(contentInformation: true, offset: 0, length: nil)
        // A seek planned while the entry is prepared holds the preparation too.
        await eventually("first chunk") { play.received >= Self.chunkSize }
        let seek = player.start(offset: 4 * Self.chunkSize, length: nil)
        try await Task.sleep(for: .milliseconds(200))
        gate.open()
        await eventually("ended") { ended(play) && ended(seek) }
        #expect(play.state.withLock { $0.outcome.error } == nil)
        #expect(play.state.withLock { $0.outcome.data } == content)
        #expect(seek.state.withLock { $0.outcome.error } == nil)
        #expect(seek.state.withLock { $0.outcome.data } == content.suffix(from: 4 * Self.chunkSize))
        #expect(await loader.cachingSkippedReason != nil)
        #expect(try store.info(forKey: loader.cacheKey) == nil)
    }

    @Test(
        "the player cancels while a whole chunk waits for the entry: nothing hangs, the next play is whole and stored")
    func cancelWhileWaiting() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 1234, seed: 73)
        let gate = AsyncGate()
        defer { gate.open() }
        let origin = FakeOrigin(serving: content)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "cancel.bin",
            preparation: { await gate.pass() })
        let (loader, fetcher, player) = (fixture.loader, fixture.fetcher, fixture.player)
        let play = player.start(contentInformation: true, offset: 0, length: nil)
        await eventually("first chunk") { play.received >= Self.chunkSize }
        player.cancel(play)
        try await Task.sleep(for: .milliseconds(200))
        gate.open()
        await eventually("transfers drained") { await fetcher.transfers.isEmpty }
        #expect(await fetcher.entryVersion != nil)
        let again = player.start(offset: 0, length: nil)
        await eventually("second ended") { ended(again) }
        #expect(again.state.withLock { $0.outcome.error } == nil)
        #expect(again.state.withLock { $0.outcome.data } == content)
        await eventually("complete") { (try? store.info(forKey: loader.cacheKey))??.isComplete == true }
        #expect(try store.read(forKey: loader.cacheKey, range: 0..<content.count) == content)
    }

    /// The retried probe accepts a first response again and begins a second
    /// preparation; the first then binds nothing. What counts: every byte,
    /// stored once complete.
    ///
    /// The first response's connection drops after its head (a fault
    /// forced at its first body byte): a stall would need the watchdog's
    /// timer, and beside a full parallel run every step of the retried
    /// probe took up to a second, so that the retries stalled too (a timer
    /// racing the suite). The stall timeout is long enough that no step does.
    @Test("A probe whose first response drops before its type is known is retried: the play and the entry are whole")
    func retriedProbePreparesOnce() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 321, seed: 74)
        let origin = FakeOrigin(versions: [FakeOrigin.Version(bytes: content)], fault: .dropAfter(bytes: 0), times: 1)
        let count = Locked(0)
        let fixture = GatedPreparation(
            store: store, origin: origin, name: "retried.bin", stallTimeout: .seconds(120),
            preparation: { count.withLock { $0 += 1 } })
        let loader = fixture.loader
        let play = PlayerSimulator(loader: loader).start(contentInformation: true, offset: 0, length: nil)
        await eventually("ended") { ended(play) }
        #expect(play.state.withLock { $0.outcome.error } == nil)
        #expect(play.state.withLock { $0.outcome.data } == content)
        await eventually("complete") { (try? store.info(forKey: loader.cacheKey))??.isComplete == true }
        // One preparation per probe that got a first response; one retry, forced by the drop.
        #expect(loader.statistics.retries == 1)
        #expect(count.withLock { $0 } == 2)
        #expect(origin.injected == 1)
    }
}
