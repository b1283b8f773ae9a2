import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// The persistent download queue against a real nginx: order, pins, the
/// index across reopening, conditions, the storage floor, aggregate
/// progress and cancel-all.
@Suite(
    "Download queue", .enabled(if: ExternalTool.available("nginx"), "needs nginx (Tools/bootstrap installs it)"),
    .timeLimit(.minutes(1)))
struct DownloadQueueTests {
    let server = NginxServer.shared

    /// Requests big enough for nginx's `limit_rate` to pace them.
    static let paced = StreamingConfiguration(chunksPerRequest: 16, stallTimeout: .seconds(5))

    /// Copies of the large fixture under their own names, served slowly.
    func slowCopies(_ prefix: String, _ count: Int) throws -> (urls: [URL], data: Data) {
        let data = try Fixtures.data("track.wav")
        let names = (0..<count).map { "\(prefix)-\($0).wav" }
        for name in names { try server.publish(data, at: name) }
        return (names.map { server.url("slow/\($0)") }, data)
    }

    @Test(
        "Downloads start in the order enqueued or resumed, one at a time; completed ones are pinned and survive reopening"
    )
    func orderPinsAndReopening() async throws {
        let test = try TestCache()
        let names = ["track.mp3", "track.aac", "track.flac"]
        let urls = names.map { server.url($0) }
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 1))
        let updates = await queue.updates()
        // Stopped before it can start, then resumed: it goes behind the others.
        let first = try await queue.enqueue(urls[0])
        let second = try await queue.enqueue(urls[1])
        try await queue.stop(second.id)
        let third = try await queue.enqueue(urls[2])
        try await queue.resume(second.id)
        var started: [UUID] = []
        var downloadingAtOnce = 0
        var statuses: [UUID: DownloadStatus] = [:]
        for await record in updates {
            statuses[record.id] = record.status
            if record.status == .downloading, started.last != record.id { started.append(record.id) }
            downloadingAtOnce = max(downloadingAtOnce, statuses.values.filter { $0 == .downloading }.count)
            if statuses.count == 3, statuses.values.allSatisfy({ $0 == .completed }) { break }
        }
        #expect(started == [first.id, third.id, second.id])
        #expect(downloadingAtOnce == 1)
        for (name, url) in zip(names, urls) {
            let info = try #require(try test.store.info(forKey: url.absoluteString))
            #expect(info.isComplete && info.isPinned, "\(name)")
            #expect(try test.storedBytes(of: url) == (try Fixtures.data(name)))
        }
        let before = await queue.downloads
        // Observers hear of a change before it is saved: wait for the saved index.
        let store = test.store!
        await eventually("the index is saved") {
            ((try? DownloadIndex(store: store).load()) ?? []).allSatisfy { $0.status == .completed }
        }

        // A new session over the same store: the same downloads, completed, in the same order.
        test.freshCache()
        let reopened = try await DownloadQueue.open(cache: test.cache)
        let after = await reopened.downloads
        #expect(after.map(\.id) == before.map(\.id))
        #expect(after.allSatisfy { $0.status == .completed })
        #expect(after.map(\.bytesStored) == [0, 2, 1].map { (try? Fixtures.data(names[$0]).count) ?? -1 })
        try await reopened.completion(of: first.id)
        // Removing one removes its bytes and its record.
        try await reopened.remove(first.id)
        #expect(try test.store.info(forKey: urls[0].absoluteString) == nil)
        #expect(await reopened.download(first.id) == nil)
    }

    @Test("A download that needs an unmetered network waits while it is expensive and starts when that flips")
    func waitsForAnUnmeteredNetwork() async throws {
        let test = try TestCache()
        let url = server.url("track.m4a")
        let monitor = SettableConditionsMonitor(DeviceConditions(isExpensive: true))
        let queue = try await DownloadQueue.open(cache: test.cache, monitor: monitor)
        let record = try await queue.enqueue(url, conditions: .unmetered)
        await eventually("it waits for the network") {
            await queue.download(record.id)?.status == .waiting([.expensiveNetwork])
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(await queue.download(record.id)?.status == .waiting([.expensiveNetwork]))
        #expect(test.origin.requests.isEmpty, "nothing fetched while it waits")
        monitor.update { $0.isExpensive = false }
        try await queue.completion(of: record.id)
        #expect(try test.storedBytes(of: url) == (try Fixtures.data("track.m4a")))
    }

    @Test("A discretionary download waits while a player's transfer runs, then runs")
    func discretionaryWaitsForPlayback() async throws {
        let (urls, original) = try slowCopies("discretionary", 2)
        let test = try TestCache(configuration: Self.paced)
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(pollInterval: .milliseconds(20)))
        let player = test.player(urls[0])
        let playing = player.start(offset: 0, length: original.count)
        await playing.waitFor(bytes: 1)
        let record = try await queue.enqueue(urls[1], conditions: DownloadConditions(isDiscretionary: true))
        await eventually("it waits for playback") {
            await queue.download(record.id)?.status == .waiting([.higherPriorityActive])
        }
        // (On a loaded machine a player that falls a request behind counts
        // as paused, and a request of the download may slip in.)
        let requestBytes = Self.paced.chunksPerRequest * TestCache.chunkSize
        #expect(test.origin.bodyBytes(for: urls[1]) <= requestBytes)
        let played = await playing.outcome()
        #expect(try test.store.info(forKey: urls[1].absoluteString)?.isComplete != true, "not done before the player")
        #expect(played.data == original)
        try await queue.completion(of: record.id)
        #expect(try test.storedBytes(of: urls[1]) == original)
    }

    @Test(
        "Storage floor: unpinned entries are evicted first, then the download waits with storageLow and goes on when room is made"
    )
    func storageFloor() async throws {
        let (urls, original) = try slowCopies("floor", 1)
        let test = try TestCache(configuration: Self.paced)
        var random = SplitMix64(seed: 11)
        // Room for one filler's worth (the download needs more: about half its length once compressed).
        let filler = (0..<1).map { index in
            ("filler-\(index)", Data((0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }))
        }
        for (key, data) in filler { try test.store.put(data, forKey: key) }
        try test.store.put(Data(repeating: 7, count: 100_000), forKey: "kept", options: WriteOptions(pinned: true))
        let floor: Int64 = 1 << 20
        // The volume: `budget` bytes, of which the store's file takes its size.
        let volume = VolumeMonitor(store: test.store, budget: 0)
        let stored = Int64(try test.store.statistics().storedBytes)
        volume.budget = stored + floor - 1  // just short of the floor
        // One connection: how close to the floor it stops is a single
        // stream's bound (each further connection may add a chunk in flight).
        var configuration = DownloadQueueConfiguration(storageFloor: floor, pollInterval: .milliseconds(20))
        configuration.connectionsPerDownload = 1
        let queue = try await DownloadQueue.open(cache: test.cache, configuration: configuration, monitor: volume)
        let record = try await queue.enqueue(urls[0])
        await eventually("the download runs out of room") {
            if case .waiting(let reasons) = await queue.download(record.id)?.status {
                return reasons.contains { if case .storageLow = $0 { true } else { false } }
            }
            return false
        }
        for (key, _) in filler { #expect(try test.store.info(forKey: key) == nil, "\(key) evicted first") }
        #expect(try test.store.info(forKey: "kept")?.isPinned == true, "a pinned entry is kept")
        let kept = try test.cache.cachedRanges(for: urls[0]).byteCount
        #expect(kept > 100_000 && kept < original.count, "\(kept) bytes stored before it stopped")
        #expect(try test.store.info(forKey: urls[0].absoluteString)?.isPinned == true, "its partial bytes are kept")
        let headroom = volume.budget - Int64(try test.store.statistics().storedBytes)
        #expect(headroom > floor - 256 * 1024, "it stopped near the floor: \(headroom) of \(floor)")
        try await Task.sleep(for: .milliseconds(200))
        // Its connection ends at its next chunk boundary, then nothing more.
        let connections = configuration.connectionsPerDownload
        let after = try test.cache.cachedRanges(for: urls[0]).byteCount
        #expect(after <= kept + (connections + 1) * TestCache.chunkSize, "it does not go on: \(kept) then \(after)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(try test.cache.cachedRanges(for: urls[0]).byteCount == after, "it does not go on")

        volume.budget += 2 << 20
        try await queue.completion(of: record.id)
        #expect(try test.storedBytes(of: urls[0]) == original)
        // Stopped, each connection drops what it had of the chunk it was in (and the piece in flight).
        #expect(
            test.origin.bodyBytes(for: urls[0]) <= original.count + 4 * connections * TestCache.chunkSize,
            "nothing lost")
    }

    @Test("Aggregate progress over several downloads ends at every byte, with a throughput on the way")
    func aggregateProgress() async throws {
        let (urls, original) = try slowCopies("aggregate", 2)
        let test = try TestCache(configuration: Self.paced)
        let queue = try await DownloadQueue.open(cache: test.cache)
        let updates = queue.progressUpdates()
        for url in urls { try await queue.enqueue(url) }
        var seen: [AggregateDownloadProgress] = []
        for await update in updates {
            seen.append(update)
            if update.completed == 2 && update.active == 0 { break }
        }
        let last = try #require(seen.last)
        #expect(last.progress.bytes == 2 * original.count)
        #expect(last.progress.total == last.progress.bytes)
        #expect(last.progress.state == .completed)
        #expect(last.fractionCompleted == 1)
        #expect(queue.progress.completedUnitCount == Int64(2 * original.count))
        #expect(queue.progress.fractionCompleted == 1)
        let active = seen.filter { $0.active > 0 }
        #expect(zip(active, active.dropFirst()).allSatisfy { $0.progress.bytes <= $1.progress.bytes })
        #expect(active.allSatisfy { $0.progress.state == .downloading })
        #expect(seen.contains { ($0.throughput ?? 0) > 0 && $0.estimatedTimeRemaining != nil })
    }

    @Test("Cancel-all: every active and queued download fails with userCancelled, pins released, progress final")
    func cancelAll() async throws {
        let (urls, _) = try slowCopies("cancel", 4)
        let test = try TestCache(configuration: Self.paced)
        let queue = try await DownloadQueue.open(
            cache: test.cache, configuration: DownloadQueueConfiguration(maxConcurrentDownloads: 2))
        var records: [DownloadRecord] = []
        for url in urls { records.append(try await queue.enqueue(url)) }
        await eventually("two download") {
            let downloads = await queue.downloads
            return downloads.filter { $0.status == .downloading }.count == 2 && test.origin.bodyBytes > 100_000
        }
        try await queue.stop(records[3].id)
        try await queue.cancelAll()
        for record in records {
            await #expect(throws: DownloadError.cancelled) { try await queue.completion(of: record.id) }
            #expect(await queue.download(record.id)?.status == .failed(.cancelled))
            #expect(try test.store.info(forKey: record.cacheKey)?.isPinned != true)
        }
        let aggregate = queue.aggregateProgress
        #expect(aggregate.active == 0 && aggregate.cancelled == 4 && aggregate.completed == 0)
        #expect(aggregate.progress.bytes == aggregate.progress.total)
        #expect(aggregate.progress.state == .cancelled)
        #expect(queue.progress.isCancelled)
        // Nothing goes on after it but what was in flight (on a loaded
        // machine the cancellation takes a moment to reach the transfers).
        let fetched = test.origin.bodyBytes
        var settled = fetched
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(200))
            if test.origin.bodyBytes == settled { break }
            settled = test.origin.bodyBytes
        }
        #expect(test.origin.bodyBytes == settled, "the transfers ended")
        let requestBytes = Self.paced.chunksPerRequest * TestCache.chunkSize
        #expect(settled <= fetched + 2 * requestBytes)
        for record in records {
            #expect(try test.store.info(forKey: record.cacheKey)?.isComplete != true)
        }
    }
}

/// A volume of `budget` bytes holding the store's file: its free bytes
/// shrink as the file grows (and not when entries are evicted: LMDB keeps
/// its file and reuses the pages).
final class VolumeMonitor: ConditionsMonitor, @unchecked Sendable {
    private let lock = NSLock()
    private var value: Int64
    private let store: MediaStore
    private let base = SettableConditionsMonitor()

    init(store: MediaStore, budget: Int64) {
        self.store = store
        self.value = budget
    }

    var budget: Int64 {
        get { lock.withLock { value } }
        set {
            lock.withLock { value = newValue }
            base.set(current)
        }
    }

    var current: DeviceConditions {
        let fileBytes = Int64((try? store.statistics().fileBytes) ?? 0)
        return DeviceConditions(freeBytes: budget - fileBytes)
    }

    func updates() -> AsyncStream<DeviceConditions> { base.updates() }
}
