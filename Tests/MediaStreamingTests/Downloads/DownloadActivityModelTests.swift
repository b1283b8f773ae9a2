import Foundation
import MediaDownloads
import Testing

/// The downloads as one activity (DownloadActivityModel): each rule of its
/// documentation, and odd orders of inputs.
@Suite("Download activity model")
struct DownloadActivityModelTests {
    typealias Download = DownloadActivityModel.Download

    let a = UUID()
    let b = UUID()
    let c = UUID()
    let t0 = Date(timeIntervalSince1970: 1_000)
    let t1 = Date(timeIntervalSince1970: 2_000)

    func download(
        _ id: UUID, _ status: DownloadStatus, _ fraction: Double = 0, discretionary: Bool = false,
        title: String? = nil
    ) -> Download {
        Download(
            id: id, title: title ?? "title \(id == a ? "A" : id == b ? "B" : "C")", isDiscretionary: discretionary,
            status: status, fraction: fraction)
    }

    /// `model.apply(…)`, which must return a change.
    func applied(_ model: inout DownloadActivityModel, _ download: Download, at now: Date) throws
        -> DownloadActivityChange
    {
        let change = model.apply(download, at: now)
        return try #require(change)
    }

    func applied(_ model: inout DownloadActivityModel, snapshot: [Download], at now: Date) throws
        -> DownloadActivityChange
    {
        let change = model.apply(snapshot: snapshot, at: now)
        return try #require(change)
    }

    @Test func firstResumedDownloadStartsTheActivityWithItsTitle() throws {
        var model = DownloadActivityModel()
        // Stopped before ever being resumed: not counted, nothing shown.
        #expect(model.apply(download(a, .stopped(.user)), at: t0) == nil)
        #expect(model.state == nil)
        let change = try applied(&model, download(a, .queued, 0.25), at: t1)
        guard case .start(let state) = change else {
            Issue.record("expected a start, got \(change)")
            return
        }
        #expect(state.phase == .downloading)
        #expect(state.title == "title A")
        #expect(state.inFlight == 1)
        #expect(state.fractionCompleted == 0.25)
        #expect(state.started == t1)
        #expect(model.state == state)
    }

    @Test func twoInFlightShowACountAndTheMeanOfTheirFractions() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading, 0.5), at: t0)
        let change = try applied(&model, download(b, .queued, 0.1), at: t1)
        #expect(change == .update(change.state))
        #expect(change.state.title == nil)
        #expect(change.state.inFlight == 2)
        #expect(abs(change.state.fractionCompleted - 0.3) < 1e-9)
        // Started stays the first join's time.
        #expect(change.state.started == t0)
        // The same input again changes nothing.
        #expect(model.apply(download(b, .queued, 0.1), at: t1) == nil)
    }

    @Test func aCompletedMemberLeavesTheMeanAndTheLastOneTitlesIt() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading, 0.5), at: t0)
        _ = model.apply(download(b, .downloading, 0.2), at: t0)
        let change = try applied(&model, download(a, .completed, 1), at: t1)
        #expect(change.state.phase == .downloading)
        #expect(change.state.title == "title B")
        #expect(change.state.fractionCompleted == 0.2)
        #expect(change.state.completed == 1)
    }

    @Test func allCompletedEndsCompleted() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading, 0.5), at: t0)
        _ = model.apply(download(b, .queued), at: t0)
        _ = model.apply(download(a, .completed), at: t0)
        let change = try applied(&model, download(b, .completed), at: t1)
        guard case .end(let state) = change else {
            Issue.record("expected an end, got \(change)")
            return
        }
        #expect(state.phase == .completed)
        #expect(state.completed == 2)
        #expect(state.fractionCompleted == 1)
        #expect(state.inFlight == 0)
        #expect(model.state == nil)
    }

    @Test func aFailureShowsOnlyOnceAllHaveFinished() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(b, .downloading), at: t0)
        let failed = try applied(&model, download(a, .failed(.transfer("reset"))), at: t0)
        #expect(failed.state.phase == .downloading)
        #expect(failed.state.failed == 1)
        let end = try applied(&model, download(b, .completed), at: t1)
        #expect(end == .end(end.state))
        #expect(end.state.phase == .failed)
        #expect(end.state.failed == 1)
        #expect(end.state.completed == 1)
        #expect(end.state.fractionCompleted == 0.5)
    }

    @Test func aFailedMemberResumedJoinsAgainAtTheEnd() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(b, .downloading), at: t0)
        _ = model.apply(download(a, .failed(.transfer("reset"))), at: t0)
        #expect(model.cancelAllTargets == [b])
        let resumed = try applied(&model, download(a, .queued), at: t1)
        #expect(resumed.state.failed == 0)
        #expect(resumed.state.inFlight == 2)
        #expect(model.cancelAllTargets == [b, a])
        // Both complete: the earlier failure is gone from the outcome.
        _ = model.apply(download(b, .completed), at: t1)
        let end = try applied(&model, download(a, .completed), at: t1)
        #expect(end.state.phase == .completed)
        #expect(end.state.completed == 2)
    }

    @Test func aDownloadThatFailedBeforeTheActivityAndIsResumedStartsIt() throws {
        var model = DownloadActivityModel()
        // Ends never counted: nothing.
        #expect(model.apply(download(a, .failed(.transfer("x"))), at: t0) == nil)
        #expect(model.apply(download(b, .completed), at: t0) == nil)
        let change = try applied(&model, download(a, .queued), at: t1)
        #expect(change == .start(change.state))
        #expect(change.state.failed == 0)
        #expect(change.state.completed == 0)
    }

    @Test func queuedOnesAreKeptInResumeOrder() {
        var model = DownloadActivityModel()
        _ = model.apply(download(c, .queued), at: t0)
        _ = model.apply(download(a, .queued), at: t0)
        _ = model.apply(download(b, .downloading), at: t0)
        // Updates of members in flight keep their places.
        _ = model.apply(download(c, .downloading, 0.5), at: t0)
        _ = model.apply(download(a, .waiting([.noNetwork])), at: t0)
        #expect(model.cancelAllTargets == [c, a, b])
        // Stopped and resumed: back at the end.
        _ = model.apply(download(c, .stopped(.user)), at: t0)
        _ = model.apply(download(c, .queued), at: t0)
        #expect(model.cancelAllTargets == [a, b, c])
    }

    @Test func discretionaryDownloadsAreNotCounted() throws {
        var model = DownloadActivityModel()
        #expect(model.apply(download(a, .downloading, 0.9, discretionary: true), at: t0) == nil)
        _ = model.apply(download(b, .downloading, 0.1), at: t0)
        #expect(model.state?.inFlight == 1)
        #expect(model.state?.fractionCompleted == 0.1)
        #expect(model.cancelAllTargets == [b])
        // Its end is not counted either.
        #expect(model.apply(download(a, .failed(.transfer("x")), discretionary: true), at: t0) == nil)
        let end = try applied(&model, download(b, .completed), at: t1)
        #expect(end.state.phase == .completed)
        #expect(end.state.failed == 0)
    }

    @Test func aDiscretionaryDownloadBecomingNonDiscretionaryJoinsThen() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(b, .queued), at: t0)
        _ = model.apply(download(a, .downloading, 0.4, discretionary: true), at: t0)
        let joined = try applied(&model, download(a, .downloading, 0.4), at: t1)
        #expect(joined.state.inFlight == 2)
        #expect(model.cancelAllTargets == [b, a])
        // Discretionary again: leaves without an outcome.
        let left = try applied(&model, download(a, .downloading, 0.5, discretionary: true), at: t1)
        #expect(left.state.inFlight == 1)
        #expect(left.state.title == "title B")
        // Alone, it starts an activity of its own.
        var fresh = DownloadActivityModel()
        _ = fresh.apply(download(a, .downloading, 0.4, discretionary: true), at: t0)
        let start = try applied(&fresh, download(a, .downloading, 0.4), at: t1)
        #expect(start == .start(start.state))
        #expect(start.state.started == t1)
    }

    @Test func cancelAllNamesEveryMemberInFlightAndEndsCancelled() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(b, .queued), at: t0)
        _ = model.apply(download(c, .queued, discretionary: true), at: t0)
        let targets = model.cancelAllTargets
        #expect(targets == [a, b])
        var last: DownloadActivityChange?
        for id in targets { last = model.apply(download(id, .failed(.cancelled)), at: t1) }
        let end = try #require(last)
        #expect(end == .end(end.state))
        #expect(end.state.phase == .cancelled)
        #expect(end.state.cancelled == 2)
        #expect(end.state.failed == 0)
        #expect(model.cancelAllTargets.isEmpty)
    }

    @Test func cancelAllWithNothingInFlightNamesNothing() {
        var model = DownloadActivityModel()
        #expect(model.cancelAllTargets.isEmpty)
        _ = model.apply(download(a, .downloading, discretionary: true), at: t0)
        #expect(model.cancelAllTargets.isEmpty)
        _ = model.apply(download(b, .downloading), at: t0)
        _ = model.apply(download(b, .completed), at: t0)
        #expect(model.cancelAllTargets.isEmpty)
        #expect(model.state == nil)
    }

    @Test func aFailureOutranksACancellation() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(b, .downloading), at: t0)
        _ = model.apply(download(a, .failed(.cancelled)), at: t0)
        let end = try applied(&model, download(b, .failed(.origin(status: 404, url: nil))), at: t0)
        #expect(end.state.phase == .failed)
        #expect(end.state.cancelled == 1)
        #expect(end.state.failed == 1)
    }

    @Test func membersThatAllLeaveUnfinishedEndIdle() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(b, .queued), at: t0)
        _ = model.apply(download(a, .stopped(.user)), at: t0)
        let end = try applied(&model, download(b, .removing), at: t1)
        #expect(end == .end(end.state))
        #expect(end.state.phase == .idle)
        #expect(end.state.fractionCompleted == 0)
    }

    @Test func anEndedActivityIsForgottenAndTheNextJoinStartsAnother() throws {
        var model = DownloadActivityModel()
        _ = model.apply(download(a, .downloading), at: t0)
        _ = model.apply(download(a, .failed(.transfer("x"))), at: t0)
        let start = try applied(&model, download(b, .queued), at: t1)
        #expect(start == .start(start.state))
        #expect(start.state.failed == 0)
        #expect(start.state.started == t1)
    }

    @Test func aSnapshotIsOneChangeAndDropsMissingMembers() throws {
        var model = DownloadActivityModel()
        let start = try applied(
            &model,
            snapshot: [download(a, .downloading, 0.5), download(b, .queued), download(c, .completed)], at: t0)
        #expect(start == .start(start.state))
        #expect(start.state.inFlight == 2)
        // `c` completed before the activity: never counted.
        #expect(start.state.completed == 0)
        #expect(model.cancelAllTargets == [a, b])
        // `a` is gone (removed while nobody listened): it leaves.
        let update = try applied(&model, snapshot: [download(b, .downloading, 0.5)], at: t1)
        #expect(update == .update(update.state))
        #expect(update.state.title == "title B")
        #expect(model.cancelAllTargets == [b])
    }

    @Test func aRefreshTakesFractionsOfMembersInFlightOnly() throws {
        var model = DownloadActivityModel()
        // No activity: nothing to refresh, nothing starts.
        #expect(model.refresh(fractions: [a: 0.5], at: t0) == nil)
        _ = model.apply(download(a, .downloading, 0.1), at: t0)
        _ = model.apply(download(b, .downloading, 0.1), at: t0)
        _ = model.apply(download(c, .downloading, 0.1, discretionary: true), at: t0)
        let change = model.refresh(fractions: [a: 0.5, b: 0.3, c: 1, UUID(): 1], at: t1)
        let update = try #require(change)
        #expect(update == .update(update.state))
        #expect(abs(update.state.fractionCompleted - 0.4) < 1e-9)
        #expect(update.state.inFlight == 2)
        // A finished member keeps its outcome; the same fractions again change nothing.
        _ = model.apply(download(a, .failed(.transfer("x"))), at: t1)
        #expect(model.refresh(fractions: [a: 0.9, b: 0.3], at: t1) == nil)
        #expect(model.state?.fractionCompleted == 0.3)
        #expect(model.state?.failed == 1)
    }

    @Test func hostileFractionsAndTitlesAreBounded() throws {
        var model = DownloadActivityModel()
        let long = String(repeating: "é", count: 10_000)
        _ = model.apply(download(a, .downloading, .nan, title: long), at: t0)
        #expect(model.state?.fractionCompleted == 0)
        #expect(model.state?.title == String(repeating: "é", count: DownloadActivityModel.maxTitleBytes / 2))
        // One character of 10,001 scalars: over the bound on its own, so no title.
        let stacked = "e" + String(repeating: "\u{301}", count: 10_000)
        #expect(stacked.count == 1)
        _ = model.apply(download(a, .downloading, title: stacked), at: t0)
        #expect(model.state?.title == "")
        // Control characters, each 6 bytes of JSON: the state still encodes under ActivityKit's 4 KB.
        _ = model.apply(download(a, .downloading, title: String(repeating: "\u{1}", count: 10_000)), at: t0)
        let encoded = try JSONEncoder().encode(try #require(model.state))
        #expect(encoded.count < 4096)
        #expect(model.state?.title?.utf8.count == DownloadActivityModel.maxTitleBytes)
        _ = model.apply(download(a, .downloading, 7), at: t0)
        #expect(model.state?.fractionCompleted == 1)
        _ = model.apply(download(a, .downloading, -.infinity), at: t0)
        #expect(model.state?.fractionCompleted == 0)
    }

    @Test func aRecordsFractionComesFromItsBytes() {
        let record = DownloadRecord(
            url: URL(string: "https://example.com/a.mp4")!, cacheKey: "a",
            conditions: DownloadConditions(isDiscretionary: true), status: .downloading, bytesStored: 25,
            totalBytes: 100, queueOrder: 0)
        let input = Download(record, title: "A")
        #expect(input.fraction == 0.25)
        #expect(input.isDiscretionary)
        #expect(input.id == record.id)
        var unknown = record
        unknown.totalBytes = nil
        #expect(Download(unknown, title: "A").fraction == 0)
        unknown.status = .completed
        #expect(Download(unknown, title: "A").fraction == 1)
    }

    @Test func cancelledIsTheUserCancelledCocoaError() {
        let error = DownloadError.cancelled.cocoaError
        #expect(error.domain == NSCocoaErrorDomain)
        #expect(error.code == 3072)  // NSUserCancelledError
        // Other cases keep their default bridging, never the cancelled one's.
        let other = DownloadError.transfer("x").cocoaError
        #expect(other.domain == "MediaDownloads.DownloadError")
        #expect(other.code != 3072)
    }
}
