import Foundation
import MediaSupport
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// The fetcher against an origin in memory (no nginx).
@Suite("Fetcher")
struct FetcherTests {
    static let chunkSize = 16 * 1024

    private func makeStore() throws -> (MediaStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetcher-\(UUID().uuidString)")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return (store, directory)
    }

    @Test("A seek that takes over the rest of a running request: that request stops at the seek, on a chunk boundary")
    func seekTrimsARunningRequest() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
        // The first request's body waits after its first 8 KiB: it is still
        // running when the seek is planned, however loaded the machine
        // (with only a delay per piece, it sometimes had ended first).
        let origin = FakeOrigin(serving: content, pieceDelay: .milliseconds(5), holdFirstBody: true)
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4, lookaheadBytes: 0))
        let loader = cache.loader(for: URL(string: "https://origin.example/seek.bin")!)
        // The first request (0..<64 KiB, slow) resolves the information, then runs on.
        _ = try await loader.contentInformation()
        let seek = 2 * Self.chunkSize + 1000
        let plan = try await loader.fetcher.plan(from: seek, url: loader.url, headers: [:])
        origin.releaseFirstBody()
        guard case .stream(let stream) = plan else {
            Issue.record("the seek was not planned as a download")
            return
        }
        var received = Data()
        for try await piece in stream { received.append(piece) }
        #expect(received == content[seek...])
        // The first request stopped where the seek's download began: no
        // partial chunk was written, so caching went on.
        #expect(await loader.cachingSkippedReason == nil)
        let whole = await PlayerSimulator(loader: loader).load(offset: 0, length: nil)
        #expect(whole.data == content)
        #expect(await loader.cachingSkippedReason == nil)
        for _ in 0..<200 where try store.info(forKey: loader.cacheKey)?.isComplete != true {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try store.read(forKey: loader.cacheKey, range: 0..<content.count) == content)
    }

    @Test(
        "A download's reader cancelled while its stream still lives: its transfer stops at the next chunk boundary, not at the request's end"
    )
    func cancelledReaderWindsDownItsTransfer() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 2_000_000, seed: 46)
        let origin = FakeOrigin(serving: content, pieceDelay: .milliseconds(2))
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 2))
        let loader = cache.loader(for: URL(string: "https://origin.example/cancelled-reader.bin")!)
        _ = try await loader.contentInformation()
        await eventually("the probe's request ended") { origin.openBodies == 0 }
        // One request for the rest of the file, as a download's segment asks.
        let start = 2 * Self.chunkSize
        let plan = try await loader.fetcher.plan(
            from: start, url: loader.url, headers: [:], priority: .download,
            segment: SegmentRequests(requestBytes: 4 << 20, refusesWholeBody: true))
        guard case .stream(let stream) = plan else {
            Issue.record("the rest was not planned as a download")
            return
        }
        let read = Locked(0)
        let reader = Task {
            for try await piece in stream { read.withLock { $0 += piece.count } }
        }
        await eventually("the reader has a few chunks") { read.current >= 4 * Self.chunkSize }
        let sentAtCancel = origin.bodyBytes
        reader.cancel()
        _ = await reader.result
        // The stream is still referenced here: only the cancel tells the transfer.
        await eventually("the transfer's request ended") { origin.openBodies == 0 }
        let stored = try store.cachedRanges(forKey: loader.cacheKey).reduce(0) { $0 + $1.count }
        #expect(stored < content.count / 2, "the transfer read on to the end of its request")
        #expect(
            stored <= sentAtCancel + Self.chunkSize,
            "stored \(stored) bytes; \(sentAtCancel) had been sent when the reader was cancelled")
        withExtendedLifetime(stream) {}
    }

    @Test(
        "A download's reader cancelled while bytes are still queued for it (slower than the origin): its transfer stops at the next chunk boundary, not at the request's end"
    )
    func cancelledSlowReaderWindsDownItsTransfer() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 2_000_000, seed: 47)
        // 8 KiB every 2 ms: about three times as fast as the reader below.
        let origin = FakeOrigin(serving: content, pieceDelay: .milliseconds(2))
        // No slow-reader bound within the file: only the cancel can end the transfer early.
        let cache = StreamingCache(
            store: store, origin: origin,
            configuration: StreamingConfiguration(chunksPerRequest: 2, readerBufferLimit: 64 << 20))
        let loader = cache.loader(for: URL(string: "https://origin.example/cancelled-slow-reader.bin")!)
        _ = try await loader.contentInformation()
        await eventually("the probe's request ended") { origin.openBodies == 0 }
        let plan = try await loader.fetcher.plan(
            from: 2 * Self.chunkSize, url: loader.url, headers: [:], priority: .download,
            segment: SegmentRequests(requestBytes: 4 << 20, refusesWholeBody: true))
        guard case .stream(let stream) = plan else {
            Issue.record("the rest was not planned as a download")
            return
        }
        let read = Locked(0)
        let reader = Task {
            for try await piece in stream {
                read.withLock { $0 += piece.count }
                // Work that does not heed cancellation (a synchronous
                // consumer): the reader always finds bytes queued.
                await Self.busy(milliseconds: 6)
            }
        }
        await eventually("the reader has a few chunks, and more are queued for it") {
            read.current >= 4 * Self.chunkSize && stream.channel.backlog > 0
        }
        let sentAtCancel = origin.bodyBytes
        reader.cancel()
        await eventually("the transfer's request ended") { origin.openBodies == 0 }
        let stored = try store.cachedRanges(forKey: loader.cacheKey).reduce(0) { $0 + $1.count }
        #expect(
            stored < content.count / 2,
            "stored \(stored) bytes; \(sentAtCancel) had been sent when the reader was cancelled")
        _ = await reader.result
        withExtendedLifetime(stream) {}
    }

    /// Waits `milliseconds` whether or not the task is cancelled.
    private static func busy(milliseconds: Int) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { done.resume() }
        }
    }

    @Test("A stall timeout longer than any sleep (\"no watchdog\") plays the resource")
    func stallTimeoutPastAnySleep() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let cache = StreamingCache(
            store: store, origin: FakeOrigin(serving: content, pieceDelay: .milliseconds(1)),
            configuration: StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(Int64.max)))
        let loader = cache.loader(for: URL(string: "https://origin.example/long-watch.bin")!)
        let whole = await PlayerSimulator(loader: loader).load(offset: 0, length: nil)
        #expect(whole.data == content)
    }

    @Test("An entry replaced by another writer mid-download: the reader plays on, no byte lands in the new version")
    func entryReplacedMidDownload() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })
        let cache = StreamingCache(
            store: store, origin: FakeOrigin(serving: content, pieceDelay: .milliseconds(2)),
            configuration: StreamingConfiguration(chunksPerRequest: 2))
        let loader = cache.loader(for: URL(string: "https://origin.example/replaced.bin")!)
        _ = try await loader.contentInformation()
        // Another writer replaces the entry (another length) while the download runs.
        let replacement = try store.prepareEntry(forKey: loader.cacheKey, length: 7 * Self.chunkSize)
        let whole = await PlayerSimulator(loader: loader).load(offset: 0, length: nil)
        #expect(whole.error == nil)
        #expect(whole.data == content)
        // Which notices first depends on timing, and both are right: the
        // download's next write is refused (`replacedWrites`), or the
        // player's next read plan finds another version at the key and stops
        // the caching before that write. (A refused write alone is checked
        // in StoreIOTests.)
        #expect(await loader.cachingSkippedReason?.contains("replaced") == true)
        let now = try #require(try store.info(forKey: loader.cacheKey))
        #expect(now.version == replacement.version)
        #expect(now.cachedBytes == 0)
    }

    @Test(
        "A prefix reader that joined a longer transfer: its stream ends once its prefix is stored, not at the transfer's end"
    )
    func prefixReaderEndsWhenItsPrefixIsStored() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 40 * Self.chunkSize, seed: 47)
        let origin = FakeOrigin(serving: content, pieceDelay: .milliseconds(2))
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 2))
        let loader = cache.loader(for: URL(string: "https://origin.example/prefix-reader.bin")!)
        _ = try await loader.contentInformation()
        await eventually("the probe's request ended") { origin.openBodies == 0 }
        let start = try #require(try await loader.fetcher.firstMissingByte(from: 0))
        // A player's transfer over the whole rest of the file.
        guard case .stream(let player) = try await loader.fetcher.plan(from: start, url: loader.url, headers: [:])
        else {
            Issue.record("the player's read was not planned as a download")
            return
        }
        let playing = Task { for try await _ in player {} }
        defer { playing.cancel() }
        // A preload of the next 3.5 chunks joins it.
        let until = start + 3 * Self.chunkSize + Self.chunkSize / 2
        guard
            case .stream(let prefix) = try await loader.fetcher.plan(
                from: start, url: loader.url, headers: [:], priority: .preload, until: until)
        else {
            Issue.record("the prefix was not planned as a read of the running transfer")
            return
        }
        var received = 0
        for try await piece in prefix { received += piece.count }
        // Its stream ended with its prefix stored (the chunk holding `until`
        // whole), long before the player's transfer reached the end.
        let stored = try store.cachedRanges(forKey: loader.cacheKey)
        #expect(stored.first.map { $0.lowerBound == 0 && $0.upperBound >= until } == true, "stored: \(stored)")
        #expect(received >= until - start)
        #expect(received < content.count / 2, "read on through the player's transfer: \(received) bytes")
    }
}

/// Store failures the fetcher meets while resolving a resource.
@Suite("Fetcher and store failures")
struct FetcherStoreFailureTests {
    @Test("An unreadable stored entry is not taken for \"no entry\": the resource plays uncached and says why")
    func unreadableEntryPlaysUncached() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetcher-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16 * 1024, initialMapSize: 16 << 20))
        let content = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        let url = URL(string: "https://origin.example/unreadable.bin")!
        let key = url.absoluteString
        try store.prepareEntry(forKey: key, length: content.count)
        // Cut the entry's index record just after its key: it still matches the key, but no longer decodes.
        try store.write { transaction in
            let slot = try #require(try transaction.index.find(key)).slot
            let record = try #require(try transaction.txn.value(transaction.db.keys, key: slot))
            try transaction.txn.put(transaction.db.keys, key: slot, value: Array(record.prefix(key.utf8.count + 4)))
        }
        #expect(throws: StoreError.self) { try store.info(forKey: key) }

        let cache = StreamingCache(store: store, origin: FakeOrigin(serving: content))
        let loader = cache.loader(for: url)
        let whole = await PlayerSimulator(loader: loader).load(contentInformation: true, offset: 0, length: nil)
        #expect(whole.error == nil)
        #expect(whole.data == content)
        let reason = try #require(await loader.cachingSkippedReason)
        #expect(reason.contains("cannot read this entry"))
    }
}
