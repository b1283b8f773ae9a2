import Foundation
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// How a transfer's requests are paced on a slow link: when a reader
/// ahead waits for a running transfer, how large requests get, and how far
/// a transfer goes once its readers left. Against an origin in memory.
@Suite("Request pacing")
struct RequestPacingTests {
    static let chunkSize = 16 * 1024

    private func makeStore() throws -> (MediaStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pacing-\(UUID().uuidString)")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return (store, directory)
    }

    /// Bytes whose value says where they are (SplitMix64 of the offset's word).
    private static func content(_ count: Int, seed: UInt64) -> Data { FakeOrigin.content(count: count, seed: seed) }

    @Test("A transfer is worth waiting for when it brings the offset within a new request's two round trips")
    func paceDecisions() {
        let head = ContinuousClock.now
        // 50 ms round trip; 500 KB in the 200 ms since the head: 2.5 MB/s.
        let pace = TransferPace(
            headLatency: .milliseconds(50), responseStart: head, startPosition: 0, requestEnd: 1_000_000)
        let now = head + .milliseconds(200)
        #expect(pace.bytesPerSecond(position: 500_000, now: now).map { abs($0 - 2_500_000) < 1 } == true)
        // 200 KB ahead: 80 ms, less than two round trips (100 ms).
        #expect(pace.isWorthWaiting(for: 700_000, position: 500_000, now: now) == true)
        // 300 KB ahead: 120 ms.
        #expect(pace.isWorthWaiting(for: 800_000, position: 500_000, now: now) == false)
        // Behind or at the position: the bytes are there (or next).
        #expect(pace.isWorthWaiting(for: 400_000, position: 500_000, now: now) == true)
        // Past the request's end the transfer must ask again: 40 KB (16 ms) and a round trip is
        // less than 100 ms; 150 KB (60 ms) and a round trip is not.
        let late = TransferPace(
            headLatency: .milliseconds(50), responseStart: head, startPosition: 500_000, requestEnd: 1_000_000)
        #expect(late.isWorthWaiting(for: 1_000_000, position: 960_000, now: head + .milliseconds(184)) == true)
        #expect(late.isWorthWaiting(for: 1_050_000, position: 900_000, now: head + .milliseconds(160)) == false)
        // Less than a round trip since the head, or nothing received: not known yet.
        #expect(pace.isWorthWaiting(for: 700_000, position: 10_000, now: head + .milliseconds(10)) == nil)
        #expect(pace.isWorthWaiting(for: 700_000, position: 0, now: now) == nil)
    }

    @Test("A seek ahead of a running transfer that would bring it only later than a request of its own asks the origin")
    func seekAheadOfASlowTransferAsksTheOrigin() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Self.content(300_000, seed: 41)
        // The first request's body stops after its first 8 KiB until
        // released: a transfer going nowhere, however loaded the machine.
        let origin = FakeOrigin(serving: content, holdFirstBody: true)
        // Default lookahead: a request's worth (4 chunks), so the seek below is within it.
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/seek-ahead.bin")!)
        _ = try await loader.contentInformation()
        // Two chunks and a bit ahead of the transfer (at 8 KiB): further
        // than the chunk it fills, closer than its lookahead.
        let seek = 2 * Self.chunkSize + 1000
        let plan = try await loader.fetcher.plan(from: seek, url: loader.url, headers: [:])
        guard case .stream(let stream) = plan else {
            Issue.record("the seek was not planned as a download")
            origin.releaseFirstBody()
            return
        }
        // The seek's own request goes out while the first one still waits.
        await eventually("the seek sends a request of its own") { origin.requestCount >= 2 }
        #expect(origin.requestedResources.dropFirst().first == "/seek-ahead.bin bytes=32768-98303")
        var received = Data()
        for try await piece in stream {
            received.append(piece)
            if received.count >= 10_000 { break }
        }
        #expect(received.prefix(10_000) == content[seek..<(seek + 10_000)])
        origin.releaseFirstBody()
        let whole = await PlayerSimulator(loader: loader).load(offset: 0, length: nil)
        #expect(whole.data == content)
    }

    @Test("A reader within the chunk a running transfer fills joins it: no request of its own")
    func readerCloseAheadJoins() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Self.content(300_000, seed: 43)
        let origin = FakeOrigin(serving: content, holdFirstBody: true)
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/close-ahead.bin")!)
        _ = try await loader.contentInformation()
        let offset = 8192 + 3000
        let plan = try await loader.fetcher.plan(from: offset, url: loader.url, headers: [:])
        guard case .stream(let stream) = plan else {
            Issue.record("the read was not planned as a download")
            origin.releaseFirstBody()
            return
        }
        origin.releaseFirstBody()
        var received = Data()
        for try await piece in stream {
            received.append(piece)
            if received.count >= 20_000 { break }
        }
        #expect(received.prefix(20_000) == content[offset..<(offset + 20_000)])
        #expect(origin.requestCount == 1)
    }

    @Test("A reader that keeps reading gets larger requests after the first: fewer round trips")
    func requestsGrowWhileReaderReads() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Self.content(600_000, seed: 47)
        let origin = FakeOrigin(serving: content)
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/grow.bin")!)
        let whole = await PlayerSimulator(loader: loader).load(contentInformation: true, offset: 0, length: nil)
        #expect(whole.data == content)
        // 64 KiB (the probe), then 4 × that, to the end: one after another,
        // none larger. (On a loaded machine the probe may end before the
        // player joins it; the next transfer starts at 64 KiB again.)
        let ranges = origin.rangeHeaders.compactMap(Self.range)
        #expect(ranges.count == origin.rangeHeaders.count)
        #expect(ranges.first?.lowerBound == 0 && ranges.last?.upperBound == content.count)
        #expect(zip(ranges, ranges.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        #expect(ranges.allSatisfy { $0.count <= 4 * 65536 } && ranges.contains { $0.count == 4 * 65536 })
        #expect(ranges.count <= 5, "\(origin.rangeHeaders)")
    }

    /// The range of a `bytes=a-b` header.
    private static func range(_ header: String) -> Range<Int>? {
        let bounds = header.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
        guard header.hasPrefix("bytes="), bounds.count == 2 else { return nil }
        return bounds[0]..<(bounds[1] + 1)
    }

    @Test("A transfer whose reader left fetches at most about a request's worth more, however large its request")
    func leftTransferStopsWithinARequest() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = Self.content(1_000_000, seed: 53)
        // 4 MB/s: the second request (256 KiB) takes about 65 ms.
        let origin = FakeOrigin(
            versions: [FakeOrigin.Version(bytes: content)], pieceSize: 4096, pieceDelay: .milliseconds(1))
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/left.bin")!)
        let played = await PlayerSimulator(loader: loader).load(contentInformation: true, offset: 0, length: 100_000)
        #expect(played.data == content.prefix(100_000))
        await eventually("the transfer ends") { await loader.fetcher.transfers.isEmpty }
        // Requests: 0..<64 KiB, then 64 KiB..<320 KiB, left at about
        // 100 KB: it ends at most a request (64 KiB) and a chunk past where
        // the reader left, and the transfer ran ahead of it by a few pieces.
        let ranges = origin.rangeHeaders.compactMap(Self.range)
        #expect(ranges.contains { $0.count == 4 * 65536 }, "a large request ran: \(origin.rangeHeaders)")
        #expect(origin.bodyBytes <= 100_000 + 65536 + Self.chunkSize + 8 * 4096)
        // What it fetched is stored, as whole chunks from the start.
        let cached = try store.cachedRanges(forKey: loader.cacheKey)
        #expect(cached.first?.lowerBound == 0 && (cached.first?.upperBound ?? 0) >= 100_000)
    }
}
