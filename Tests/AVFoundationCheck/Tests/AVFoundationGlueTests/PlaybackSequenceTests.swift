@_spi(StandIn) import AVFoundation
import Foundation
import MediaStreaming
import Testing

@testable import MediaStreamingAVFoundationGlue

/// The request sequences AVPlayer issues for progressive audio, replayed
/// through the stand-in against the glue and a real nginx.
@Suite("AVFoundation glue: AVPlayer's request sequences")
@MainActor
struct PlaybackSequenceTests {
    let server = GlueServer.shared

    @Test("The item plays a custom-scheme URL whose loader delegate is the glue, on its own queue")
    func wiring() throws {
        let url = server.url("track.mp3")
        let harness = try GlueHarness(url)
        defer { harness.cleanUp() }
        #expect(harness.asset.url == ResourceLoaderBridge.customURL(for: url))
        #expect(harness.asset.url.scheme == "mediacache-http")
        #expect(harness.resourceLoader.delegate is ResourceLoaderBridge)
        #expect(harness.resourceLoader.delegateQueue != nil)
        #expect(harness.resourceLoader.standInSetDelegateCalls == 1)
        #expect(harness.resourceLoader.standInViolations.isEmpty)
        #expect(harness.item.automaticallyLoadedAssetKeys.isEmpty)
        #expect(harness.item.streamingItem.url == url)
    }

    @Test("Content information with bytes=0-1, then a to-end request: every byte, in order, on the delegate queue")
    func openingThenToEnd() async throws {
        let url = server.url("track.mp3")
        let original = try GlueServer.fixture("track.mp3")
        let harness = try GlueHarness(url)
        defer { harness.cleanUp() }

        let opening = try await harness.load(harness.request(contentInformation: true, offset: 0, length: 2))
        let information = try #require(opening.contentInformationRequest)
        #expect(information.contentType == "public.mp3")
        #expect(information.contentLength == Int64(original.count))
        #expect(information.isByteRangeAccessSupported)
        #expect(!information.isEntireLengthAvailableOnDemand)
        #expect(opening.standInRespondedData == original.prefix(2))
        #expect(opening.dataRequest?.currentOffset == 2)
        #expect(opening.standInCalls.last?.kind == .finishLoading)
        #expect(opening.finishes == 1)
        #expect(opening.standInCalls.allSatisfy { $0.onDelegateQueue })
        #expect(opening.standInViolations.isEmpty)

        let rest = try await harness.load(harness.request(offset: 2, length: nil))
        #expect(rest.standInRespondedData == original.dropFirst(2))
        #expect(rest.dataRequest?.currentOffset == Int64(original.count))
        #expect(rest.finishes == 1)
        #expect(rest.standInError == nil)
        #expect(rest.standInCalls.allSatisfy { $0.onDelegateQueue })
        #expect(rest.standInViolations.isEmpty)
        // Fetched once, in whole chunks.
        #expect(harness.origin.bodyBytes >= original.count)
        #expect(harness.origin.bodyBytes <= original.count + 4 * GlueHarness.chunkSize)

        // A later play of the same track comes from the store: AVFoundation is told it is all local.
        let key = harness.cache.cacheKey(for: url)
        #expect(try await waitUntil { (try? harness.store.info(forKey: key))??.isComplete == true })
        let later = try harness.replay(url)
        let again = try await later.load(later.request(contentInformation: true, offset: 0, length: nil))
        #expect(again.contentInformationRequest?.isEntireLengthAvailableOnDemand == true)
        #expect(again.standInRespondedData == original)
        #expect(later.origin.bodyBytes == 0)
        #expect(again.standInViolations.isEmpty)
    }

    @Test("A seek cancels the running request: its work stops, it is never answered again, the new range is served")
    func seekCancels() async throws {
        let url = server.url("track.wav")
        let original = try GlueServer.fixture("track.wav")
        // A slow network: the to-end request is still running when the seek comes.
        let harness = try GlueHarness(url, origin: CountingOrigin(delayPerPiece: .milliseconds(100)))
        defer { harness.cleanUp() }
        _ = try await harness.load(harness.request(contentInformation: true, offset: 0, length: 2))

        let playing = harness.request(offset: 0, length: nil)
        #expect(harness.resourceLoader.standInIssue(playing) == true)
        #expect(try await waitUntil { playing.standInRespondedData.count > 0 })
        #expect(harness.resourceLoader.standInCancel(playing))
        #expect(playing.isCancelled)
        let answeredBeforeCancel = playing.standInCalls.count
        let served = harness.item.streamingItem.loader.statistics
        try await Task.sleep(for: .milliseconds(400))
        // The loader stopped serving it: no byte served to anyone since (a running
        // request would have had ~4 more pieces from the slowed origin by now).
        let servedAfter = harness.item.streamingItem.loader.statistics
        #expect(servedAfter.bytesServedFromOrigin == served.bytesServedFromOrigin)
        #expect(servedAfter.bytesServedFromStore == served.bytesServedFromStore)
        #expect(playing.standInCalls.count == answeredBeforeCancel)
        #expect(playing.standInRespondedData.count < original.count)

        let seekOffset = 300_001
        let seek = try await harness.load(harness.request(offset: Int64(seekOffset), length: 50_000))
        #expect(seek.standInRespondedData == original[seekOffset..<(seekOffset + 50_000)])
        #expect(seek.finishes == 1)
        #expect(seek.standInViolations.isEmpty)

        // Never finished, never answered after didCancel.
        #expect(!playing.isFinished)
        #expect(playing.finishes == 0)
        #expect(playing.standInCalls.allSatisfy { !$0.afterCancel && $0.onDelegateQueue })
        #expect(playing.standInViolations.isEmpty)
    }

    @Test("A cancel that comes while the answers wait on the delegate queue: they are dropped, none is given")
    func cancelRacesQueuedAnswers() async throws {
        let url = server.url("track.mp3")
        let harness = try GlueHarness(url)
        defer { harness.cleanUp() }
        _ = try await harness.load(harness.request(contentInformation: true, offset: 0, length: 2))
        let queue = try #require(harness.resourceLoader.delegateQueue)
        let loader = harness.item.streamingItem.loader
        let before = loader.statistics.bytesServedFromStore + loader.statistics.bytesServedFromOrigin

        let request = harness.request(offset: 0, length: 40_000)
        #expect(harness.resourceLoader.standInIssue(request) == true)
        // Hold the delegate queue (as a busy main-thread queue would) while
        // the loader serves every byte and finishes: its answers queue up.
        let release = DispatchSemaphore(value: 0)
        queue.async { release.wait() }
        #expect(
            try await waitUntil {
                loader.statistics.bytesServedFromStore + loader.statistics.bytesServedFromOrigin >= before + 40_000
            })
        try await Task.sleep(for: .milliseconds(50))
        // Now AVFoundation cancels (a seek): isCancelled is set at once; didCancel waits its turn on the queue.
        let cancelling = UncheckedBox((harness.resourceLoader, request))
        let cancelled = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = cancelling.value.0.standInCancel(cancelling.value.1)
            cancelled.signal()
        }
        #expect(try await waitUntil { request.isCancelled })
        release.signal()
        #expect(try await waitUntil { cancelled.wait(timeout: .now()) == .success })
        // Answers the loader gave before the queue was held may have run; none after the cancel.
        let answered = request.standInCalls
        #expect(answered.allSatisfy { !$0.afterCancel }, "answered after the cancel: \(answered)")
        // The premise: some of the 40,000 bytes served were still waiting on the queue at the cancel.
        let given = answered.reduce(0) { total, call in
            if case .respond(let bytes) = call.kind { return total + bytes }
            return total
        }
        #expect(given < 40_000, "every answer ran before the hold: the race was not made")
        #expect(!request.isFinished)
        #expect(request.standInViolations.isEmpty)
    }

    @Test("Duplicate requests for the same bytes are both answered in full, fetched from the origin once")
    func duplicates() async throws {
        let url = server.url("track.wav")
        let original = try GlueServer.fixture("track.wav")
        let harness = try GlueHarness(url)
        defer { harness.cleanUp() }
        let first = harness.request(contentInformation: true, offset: 0, length: 2)
        let twin = harness.request(contentInformation: true, offset: 0, length: 2)
        #expect(harness.resourceLoader.standInIssue(first) == true)
        #expect(harness.resourceLoader.standInIssue(twin) == true)
        let a = harness.request(offset: 2, length: nil)
        let b = harness.request(offset: 2, length: nil)
        #expect(harness.resourceLoader.standInIssue(a) == true)
        #expect(harness.resourceLoader.standInIssue(b) == true)
        #expect(try await waitUntil { [first, twin, a, b].allSatisfy { $0.isFinished } })
        for request in [first, twin] {
            #expect(request.contentInformationRequest?.contentLength == Int64(original.count))
            #expect(request.standInRespondedData == original.prefix(2))
        }
        for request in [a, b] {
            #expect(request.standInRespondedData == original.dropFirst(2))
            #expect(request.finishes == 1)
        }
        for request in [first, twin, a, b] {
            #expect(request.standInViolations.isEmpty)
        }
        #expect(harness.origin.bodyBytes <= original.count + 4 * GlueHarness.chunkSize)
    }

    @Test("A resource that fails is finished with the error, once, and given no byte")
    func failingResource() async throws {
        let harness = try GlueHarness(server.url("missing.mp3"))
        defer { harness.cleanUp() }
        let request = try await harness.load(harness.request(contentInformation: true, offset: 0, length: 2))
        #expect(request.finishes == 1)
        #expect(request.standInRespondedData.isEmpty)
        let error = try #require(request.standInError as? StreamingError)
        guard case .origin(.httpStatus(404, _)) = error else {
            Issue.record("expected the origin's 404, got \(error)")
            return
        }
        #expect(request.standInCalls.allSatisfy { $0.onDelegateQueue })
        #expect(request.standInViolations.isEmpty)

        // Nothing listening at all.
        let refused = try GlueHarness(URL(string: "http://127.0.0.1:9/track.mp3")!)
        defer { refused.cleanUp() }
        let failed = try await refused.load(refused.request(contentInformation: true, offset: 0, length: 2))
        #expect(failed.finishes == 1)
        #expect(failed.standInError is StreamingError)
        #expect(failed.standInViolations.isEmpty)
    }

    @Test("A content type outside allowedContentTypes is left nil rather than set (AVFoundation raises on it)")
    func allowedContentTypes() async throws {
        let harness = try GlueHarness(server.url("track.mp3"))
        defer { harness.cleanUp() }
        let refusing = AVAssetResourceLoadingRequest(
            standInURL: harness.asset.url, contentInformation: true, offset: 0, length: 2,
            allowedContentTypes: ["com.apple.m4a-audio"])
        _ = try await harness.load(refusing)
        #expect(refusing.contentInformationRequest?.contentType == nil)
        #expect(refusing.contentInformationRequest?.contentLength ?? 0 > 0)
        #expect(refusing.standInViolations.isEmpty)
        let accepting = AVAssetResourceLoadingRequest(
            standInURL: harness.asset.url, contentInformation: true, offset: 0, length: 2,
            allowedContentTypes: ["public.mp3", "com.apple.m4a-audio"])
        _ = try await harness.load(accepting)
        #expect(accepting.contentInformationRequest?.contentType == "public.mp3")
        #expect(accepting.standInViolations.isEmpty)
    }

    @Test("Requests for other schemes, renewals and authentication are left to AVFoundation")
    func notOurs() throws {
        let harness = try GlueHarness(server.url("track.mp3"))
        defer { harness.cleanUp() }
        let key = AVAssetResourceLoadingRequest(
            standInURL: URL(string: "skd://key-server/key?id=1")!, contentInformation: true, offset: 0, length: 2)
        #expect(harness.resourceLoader.standInIssue(key) == false)
        #expect(key.standInCalls.isEmpty)
        let plain = AVAssetResourceLoadingRequest(
            standInURL: server.url("track.mp3"), contentInformation: true, offset: 0, length: 2)
        #expect(harness.resourceLoader.standInIssue(plain) == false)
        let renewal = AVAssetResourceRenewalRequest(
            standInURL: harness.asset.url, contentInformation: false, offset: nil, length: nil)
        #expect(harness.resourceLoader.standInIssueRenewal(renewal) == false)
    }
}
