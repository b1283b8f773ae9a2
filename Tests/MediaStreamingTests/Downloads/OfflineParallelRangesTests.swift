import Foundation
import MediaDownloads
import MediaStore
import MediaSupport
import Testing

@testable import MediaStreaming

/// Issue 27: a progressive offline download fetches its missing ranges
/// over several connections at once, each request bound to the version
/// being cached, into that exact entry version; a hostile or changing
/// origin never leaves mixed bytes.
@Suite struct OfflineParallelRangesTests {
    static let url = URL(string: "https://origin.test/big.bin")!
    static let chunk = TestCache.chunkSize
    /// Not a multiple of the chunk size: the last segment ends in a short chunk.
    static let content = FakeOrigin.content(count: 1_000_003, seed: 27)

    /// Routes range requests that start at or after `pivot` to `late`,
    /// the others to `early` (a change or a fault that only segments past
    /// the first see).
    final class PivotOrigin: Origin, @unchecked Sendable {
        let early: FakeOrigin
        let late: FakeOrigin
        private let pivot: Locked<Int>

        init(early: FakeOrigin, late: FakeOrigin, pivot: Int) {
            self.early = early
            self.late = late
            self.pivot = Locked(pivot)
        }

        func movePivot(to offset: Int) { pivot.withLock { $0 = offset } }

        func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
            let start = request.range?.lowerBound ?? 0
            return start >= pivot.current ? try await late.fetch(request) : try await early.fetch(request)
        }
    }

    @Test("The missing bytes are split into chunk-aligned segments of about an equal share each")
    func segmentsSplitEvenly() {
        let chunk = 100
        #expect(DownloadSegments.split([], connections: 4, chunkSize: chunk) == [])
        #expect(
            DownloadSegments.split([0..<1_000], connections: 4, chunkSize: chunk) == [
                0..<300, 300..<600, 600..<900, 900..<1_000,
            ])
        // A hole after a short chunk starts where it ends; cuts stay on chunk boundaries.
        #expect(DownloadSegments.split([150..<1_000], connections: 2, chunkSize: chunk) == [150..<600, 600..<1_000])
        // Ranges smaller than a share are segments of their own, never merged across what is stored.
        #expect(
            DownloadSegments.split([0..<100, 500..<650], connections: 4, chunkSize: chunk) == [
                0..<100, 500..<600, 600..<650,
            ])
        #expect(DownloadSegments.split([0..<1_000], connections: 1, chunkSize: chunk) == [0..<1_000])
        // Every byte once, in order, whatever the count.
        for connections in 1...9 {
            let segments = DownloadSegments.split([7..<5_003, 6_000..<9_999], connections: connections, chunkSize: 64)
            let bytes = segments.flatMap { Array($0) }
            #expect(bytes == Array(7..<5_003) + Array(6_000..<9_999))
            #expect(segments.dropLast().allSatisfy { $0.upperBound % 64 == 0 || $0.upperBound == 5_003 })
        }
    }

    @Test("Four connections fetch four segments at once; the bytes are the origin's, every request bound to its ETag")
    func fourConnectionsAtOnce() async throws {
        // Every response holds after its first chunk: requests pile up only if sent at once.
        let origin = FakeOrigin(versions: [.init(bytes: Self.content)], holdAfter: [0: Self.chunk])
        // No stall while held: each request in flight is a connection, not a retry.
        let test = try TestCache(
            configuration: StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(60)), origin: origin)
        // Asks for more than the host allows: the scheduler's 4 bound it.
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 8)
        let download = downloader.download(Self.url)
        await eventually("four requests in flight") { origin.requestCount >= 4 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(origin.requestCount == 4)
        // Four places of the file at once: the probe's (joined by the first segment) and three segments'.
        let starts = Set(origin.requests.compactMap { $0.request.range?.lowerBound })
        #expect(starts.count == 4)
        origin.release(0)
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == Self.content)
        let requests = origin.requests.map(\.request)
        // Segment requests are conditional on the version's strong ETag (If-Range).
        #expect(requests.dropFirst().allSatisfy { $0.ifRange == "\"v1\"" })
        #expect(requests.allSatisfy { ($0.range?.lowerBound ?? 0) < Self.content.count })
        // Each byte once: the origin sent the file and no more.
        #expect(origin.bodyBytes == Self.content.count)
        #expect(download.snapshot.bytes == Self.content.count)
    }

    @Test("Resumed after a pause, a parallel download asks only for the ranges it lacks")
    func resumeFetchesOnlyMissingRanges() async throws {
        let content = FakeOrigin.content(count: 2_000_000, seed: 28)
        let origin = FakeOrigin(versions: [.init(bytes: content)], pieceDelay: .milliseconds(5))
        let test = try TestCache(origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4)
        let download = downloader.download(Self.url)
        for await update in download.progressUpdates() where update.bytes > content.count / 3 { break }
        download.pause()
        #expect(download.state == .paused)
        // Every connection stops (the origin's bodies end or are dropped),
        // then nothing more is asked for while paused.
        await eventually("every response of the paused download ended") { origin.openBodies == 0 }
        let settled = (origin.bodyBytes, origin.requestCount)
        try await Task.sleep(for: .milliseconds(300))
        #expect(origin.bodyBytes == settled.0)
        #expect(origin.requestCount == settled.1)
        #expect(origin.openBodies == 0)
        let kept = try test.store.cachedRanges(forKey: key)
        // Several segments were under way: what is kept is in pieces.
        #expect(kept.count >= 2)
        let keptBytes = kept.reduce(0) { $0 + $1.count }
        #expect(keptBytes > 0 && keptBytes < content.count)

        origin.reset()
        download.resume()
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == content)
        // No request asks for a byte that was kept, and the bytes sent are the missing ones.
        for request in origin.requests.map(\.request) {
            let asked = try #require(request.range)
            #expect(!kept.contains { $0.overlaps(asked) }, "asked again for kept bytes: \(asked)")
        }
        #expect(origin.bodyBytes >= content.count - keptBytes)
        #expect(origin.bodyBytes <= content.count - keptBytes + 4 * Self.chunk)
    }

    @Test("An origin that ignores Range: segments refuse its 200s, one connection reads on; bytes exact and bounded")
    func originIgnoringRange() async throws {
        let origin = FakeOrigin(
            versions: [.init(bytes: Self.content)], pieceDelay: .milliseconds(1), fault: .ignoreRange)
        let test = try TestCache(origin: origin)
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4)
        let download = downloader.download(Self.url)
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == Self.content)
        // Read on from each segment's 200, every connection would bring the
        // bytes before its segment too (about 2.5 times the file in all).
        #expect(origin.bodyBytes <= 2 * Self.content.count)
    }

    /// Holds the answers to requests that start at or after `gated` until released.
    final class GatedOrigin: Origin, @unchecked Sendable {
        let inner: FakeOrigin
        let gated: Int
        private let open = Locked(false)
        /// Where the held requests start.
        let held = Locked<[Int]>([])

        init(_ inner: FakeOrigin, gated: Int) {
            self.inner = inner
            self.gated = gated
        }

        func release() { open.withLock { $0 = true } }

        func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
            // A cancelled fetch stops waiting: its sleep throws at once, and a
            // loop of those spun a core (and the test pool) after the test ended.
            if let start = request.range?.lowerBound, start >= gated {
                held.withLock { $0.append(start) }
                while !open.current && !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
            } else if let start = request.range?.lowerBound, start > 0 {
                // A segment between the first and the held one is answered
                // (and refused) only once the held request is out: its refusal
                // stops the segments not yet asked for (up to 10 s).
                for _ in 0..<5000 where held.current.isEmpty && !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
            return try await inner.fetch(request)
        }
    }

    @Test(
        "An origin that ignores Range, with a segment's request still out when the one connection reaches it: the 200 is read on, not refused"
    )
    func oneConnectionJoinsASegmentStillOut() async throws {
        let inner = FakeOrigin(
            versions: [.init(bytes: Self.content)], pieceDelay: .milliseconds(1), fault: .ignoreRange)
        // The last segment's request (from about 750,000) is held: it is still
        // out when the other segments' 200s were refused and one connection
        // reads on from the start.
        let origin = GatedOrigin(inner, gated: Self.content.count * 2 / 3)
        let test = try TestCache(origin: origin)
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4)
        let download = downloader.download(Self.url)
        await eventually("the one connection reached the held segment") {
            guard let start = origin.held.current.first else { return false }
            return (try? test.cache.cachedRanges(for: Self.url)) == [0..<start]
        }
        // Time to join the held segment's transfer (it is the only one left).
        try await Task.sleep(for: .milliseconds(100))
        origin.release()
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == Self.content)
    }

    @Test("A segment whose 200 was refused is not joined while it fails: the one connection reading on gets its bytes")
    func readOnDoesNotJoinARefusedSegment() async throws {
        let early = FakeOrigin(versions: [.init(bytes: Self.content)])
        let late = FakeOrigin(versions: [.init(bytes: Self.content)], pieceDelay: .milliseconds(1), fault: .ignoreRange)
        let half = Self.content.count / 2 / Self.chunk * Self.chunk
        let origin = PivotOrigin(early: early, late: late, pivot: half)
        // The refused segment's failure is held before its readers hear it.
        let failing = AsyncGate()
        defer { failing.open() }
        let configuration = StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(30))
        configuration.fetcherHooks.transferFailure.withLock { $0 = { await failing.pass() } }
        let test = try TestCache(configuration: configuration, origin: origin)
        let loader = test.cache.loader(for: Self.url)
        _ = try await loader.contentInformation()
        await eventually("the probe's request ended") { early.openBodies == 0 }
        let fetcher = loader.fetcher

        guard
            case .stream(let segment) = try await fetcher.plan(
                from: half, url: Self.url, headers: [:], priority: .download,
                segment: SegmentRequests(requestBytes: 4 << 20, refusesWholeBody: true))
        else {
            Issue.record("the segment was not planned as a transfer")
            return
        }
        let segmentOutcome = Task { () -> (any Error)? in
            do {
                for try await _ in segment {}
                return nil
            } catch { return error }
        }
        await eventually("the segment's 200 was refused") { failing.arrivalCount == 1 }

        // The one connection reading on plans from the same offset meanwhile.
        guard
            case .stream(let readOn) = try await fetcher.plan(
                from: half, url: Self.url, headers: [:], priority: .download)
        else {
            Issue.record("the read-on was not planned as a transfer")
            return
        }
        failing.open()
        var received = Data()
        for try await piece in readOn { received.append(piece) }
        #expect(received == Self.content[half...])
        let refusal = await segmentOutcome.value
        #expect(
            refusal.map { "\($0)".contains("200") } == true, "the segment ended with \(String(describing: refusal))")
    }

    @Test("A Content-Range that is not the segment asked for fails the download with a typed error, no byte mixed")
    func wrongContentRangeInASegment() async throws {
        let early = FakeOrigin(versions: [.init(bytes: Self.content)])
        let late = FakeOrigin(versions: [.init(bytes: Self.content)], fault: .wrongContentRange(shift: Self.chunk))
        let origin = PivotOrigin(early: early, late: late, pivot: Self.content.count / 2)
        let test = try TestCache(origin: origin)
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4)
        let download = downloader.download(Self.url)
        await #expect(throws: DownloadError.self) { try await download.completion() }
        guard case .failed(.transfer(let reason)) = download.state else {
            Issue.record("expected a transfer failure, got \(download.state)")
            return
        }
        #expect(reason.contains("Content-Range"))
        #expect(late.injected >= 1)
        #expect(try test.cachedBytesMatch(Self.url, Self.content))
    }

    @Test(
        "The origin's version changes under some segments: the download fails as a single stream does, then resumes whole"
    )
    func versionChangeMidDownload() async throws {
        let newContent = FakeOrigin.content(count: Self.content.count, seed: 99)
        let early = FakeOrigin(versions: [.init(bytes: Self.content, etag: "\"v1\"")])
        let late = FakeOrigin(versions: [.init(bytes: newContent, etag: "\"v2\"")])
        let origin = PivotOrigin(early: early, late: late, pivot: Self.content.count / 2)
        let test = try TestCache(origin: origin)
        let key = test.cache.cacheKey(for: Self.url)
        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: 4)
        let download = downloader.download(Self.url)
        await #expect(throws: DownloadError.self) { try await download.completion() }
        guard case .failed(.transfer(let reason)) = download.state else {
            Issue.record("expected a transfer failure, got \(download.state)")
            return
        }
        #expect(reason.contains("changed"))
        #expect(late.requestCount >= 1)
        // The old version's entry was dropped: nothing of either is mixed in the store.
        if let info = try test.store.info(forKey: key) {
            #expect(try test.cachedBytesMatch(Self.url, Self.content) || test.cachedBytesMatch(Self.url, newContent))
            #expect(info.cachedBytes < Self.content.count)
        }

        // The origin serves the new version everywhere now: a resume downloads it whole.
        origin.movePivot(to: 0)
        download.resume()
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == newContent)
    }

    @Test(
        "Resumed after the origin changed meanwhile: the old version's part is dropped and the new one downloaded, once",
        arguments: [1, 4])
    func resumeAfterChangeStartsOver(connections: Int) async throws {
        let newContent = FakeOrigin.content(count: Self.content.count, seed: 99)
        let origin = FakeOrigin(versions: [.init(bytes: newContent, etag: "\"v2\"")])
        let test = try TestCache(origin: origin)
        // What a stopped download left: three chunks of the old version, fresh.
        let key = test.cache.cacheKey(for: Self.url)
        let old = try test.store.prepareEntry(
            forKey: key, length: Self.content.count,
            options: WriteOptions(metadata: EntryMetadata(etag: "\"v1\"")))
        try test.store.write(Self.content.prefix(3 * Self.chunk), at: 0, forKey: key, version: old.version)
        #expect(try test.store.info(forKey: key)?.cachedBytes == 3 * Self.chunk, "premise: a part of v1 is stored")

        let downloader = OfflineDownloader(cache: test.cache, connectionsPerDownload: connections)
        let download = downloader.download(Self.url)
        try await download.completion()
        #expect(try test.storedBytes(of: Self.url) == newContent)
        #expect(try test.store.info(forKey: key)?.metadata.etag == "\"v2\"")
        // The old part was asked for with If-Range once, then the whole new version: no more than twice its size.
        #expect(origin.bodyBytes <= 2 * newContent.count, "\(origin.bodyBytes) bytes served")
    }
}
