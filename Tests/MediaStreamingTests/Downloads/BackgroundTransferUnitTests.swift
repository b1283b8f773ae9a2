import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import Testing

/// The pure parts of background transfers: what a response's file must
/// hold, the first range missing, the launch reconciliation, the network
/// settings of conditions, task identifiers.
@Suite("Background transfer units")
struct BackgroundTransferUnitTests {
    let url = URL(string: "https://media.example/a.mp3")!

    func request(_ range: Range<Int>?) -> TransferRequest {
        TransferRequest(identifier: "x", url: url, range: range)
    }

    @Test("A 206 must be the range asked for, and the file as long as it says")
    func partialResponses() throws {
        let response = TransferResponse(statusCode: 206, headers: ["Content-Range": "bytes 100-199/1000"])
        let expected = try TransferredFileImporter.expectation(
            for: request(100..<200), response: response, fileSize: 100)
        #expect(expected.range == 100..<200 && expected.total == 1000)
        #expect(throws: TransferImportError.sizeMismatch(expected: 100, actual: 90)) {
            try TransferredFileImporter.expectation(for: request(100..<200), response: response, fileSize: 90)
        }
        #expect(throws: TransferImportError.sizeMismatch(expected: 100, actual: 101)) {
            try TransferredFileImporter.expectation(for: request(100..<200), response: response, fileSize: 101)
        }
        let shifted = TransferResponse(statusCode: 206, headers: ["content-range": "bytes 101-199/1000"])
        #expect(throws: TransferImportError.self) {
            try TransferredFileImporter.expectation(for: request(100..<200), response: shifted, fileSize: 99)
        }
        // Shorter than asked only where the resource ends.
        let short = TransferResponse(statusCode: 206, headers: ["content-range": "bytes 100-149/1000"])
        #expect(throws: TransferImportError.self) {
            try TransferredFileImporter.expectation(for: request(100..<200), response: short, fileSize: 50)
        }
        let atEnd = TransferResponse(statusCode: 206, headers: ["content-range": "bytes 100-149/150"])
        #expect(
            try TransferredFileImporter.expectation(for: request(100..<Int.max), response: atEnd, fileSize: 50).range
                == 100..<150)
        for header in ["bytes 100-99/1000", "bytes x-1/2", "items 1-2/3", "bytes 100-199/150", "bytes 100-199"] {
            let bad = TransferResponse(statusCode: 206, headers: ["content-range": header])
            #expect(throws: TransferImportError.self, "\(header)") {
                try TransferredFileImporter.expectation(for: request(100..<200), response: bad, fileSize: 100)
            }
        }
        #expect(throws: TransferImportError.contentRange("missing")) {
            try TransferredFileImporter.expectation(
                for: request(100..<200), response: TransferResponse(statusCode: 206), fileSize: 100)
        }
    }

    @Test("A 200 is the whole resource, its Content-Length the file's size; other statuses are refused")
    func wholeResponses() throws {
        let response = TransferResponse(statusCode: 200, headers: ["Content-Length": "500"])
        #expect(
            try TransferredFileImporter.expectation(for: request(nil), response: response, fileSize: 500)
                == .init(range: 0..<500, total: 500))
        #expect(throws: TransferImportError.sizeMismatch(expected: 500, actual: 499)) {
            try TransferredFileImporter.expectation(for: request(nil), response: response, fileSize: 499)
        }
        // An origin that ignores Range answers 200: the whole file is imported.
        #expect(
            try TransferredFileImporter.expectation(for: request(100..<200), response: response, fileSize: 500).range
                == 0..<500)
        for status in [204, 304, 404, 416, 500] {
            #expect(throws: TransferImportError.unexpectedStatus(status)) {
                try TransferredFileImporter.expectation(
                    for: request(nil), response: TransferResponse(statusCode: status), fileSize: 0)
            }
        }
        #expect(throws: TransferImportError.unexpectedStatus(206)) {
            try TransferredFileImporter.expectation(
                for: request(nil),
                response: TransferResponse(statusCode: 206, headers: ["content-range": "bytes 0-0/1"]),
                fileSize: 1)
        }
    }

    @Test("The first range missing: holes first, an unknown end open, nothing stored asks for the whole")
    func firstMissing() {
        typealias P = BackgroundTransferPerformer
        #expect(P.firstMissing(stored: [], length: nil) == .some(nil))
        #expect(P.firstMissing(stored: [], length: 100) == .some(0..<100))
        #expect(P.firstMissing(stored: [0..<100], length: 100) == .none)
        #expect(P.firstMissing(stored: [0..<10, 30..<100], length: 100) == .some(10..<30))
        #expect(P.firstMissing(stored: [10..<100], length: 100) == .some(0..<10))
        #expect(P.firstMissing(stored: [0..<40], length: 100) == .some(40..<100))
        #expect(P.firstMissing(stored: [0..<40], length: nil) == .some(40..<Int.max))
    }

    @Test("Range headers: closed, open-ended, none for the whole")
    func rangeHeaders() {
        #expect(request(10..<20).allHeaders["Range"] == "bytes=10-19")
        #expect(request(10..<Int.max).allHeaders["Range"] == "bytes=10-")
        #expect(request(nil).allHeaders["Range"] == nil)
    }

    @Test("Task identifiers round-trip; anything else is someone else's task")
    func identifiers() {
        let id = UUID()
        let identifier = TransferIdentifier(download: id, offset: 32768)
        #expect(TransferIdentifier(identifier.description) == identifier)
        for other in [
            "", "x/1", "\(id.uuidString)/-1", "\(id.uuidString)/01", "\(id.uuidString)/1/2",
            "\(id.uuidString)/", String(repeating: "9", count: 100),
        ] {
            #expect(TransferIdentifier(other) == nil, "\(other)")
        }
        #expect(TransferResumeData(identifier: "a", data: Data(count: TransferResumeData.limit + 1)) == nil)
        #expect(TransferResumeData(identifier: "a", data: Data(count: 10))?.data.count == 10)
    }

    @Test("Conditions onto the session: unmetered forbids cellular and expensive, Low Data forbids constrained")
    func networkPolicy() {
        let any = TransferNetworkPolicy(conditions: .any)
        #expect(any.allowsCellularAccess && any.allowsExpensiveNetworkAccess && any.allowsConstrainedNetworkAccess)
        #expect(!any.isDiscretionary)
        let unmetered = TransferNetworkPolicy(conditions: .unmetered)
        #expect(!unmetered.allowsCellularAccess && !unmetered.allowsExpensiveNetworkAccess)
        #expect(!unmetered.allowsConstrainedNetworkAccess)
        let lowData = TransferNetworkPolicy(conditions: DownloadConditions(allowsConstrainedNetwork: false))
        #expect(lowData.allowsCellularAccess && lowData.allowsExpensiveNetworkAccess)
        #expect(!lowData.allowsConstrainedNetworkAccess)
        #expect(TransferNetworkPolicy(conditions: DownloadConditions(isDiscretionary: true)).isDiscretionary)
        #expect(TransferNetworkPolicy(conditions: .any, startedInBackground: true).isDiscretionary)
    }

    func record(_ status: DownloadStatus) -> DownloadRecord {
        DownloadRecord(url: url, cacheKey: UUID().uuidString, status: status, queueOrder: 1)
    }

    @Test(
        "Launch: one task per download that runs, none for a paused or gone one, deliveries kept for those that go on")
    func reconciliation() {
        let queued = record(.queued)
        let stopped = record(.stopped(.user))
        let completed = record(.completed)
        let cancelled = record(.failed(.cancelled))
        let failed = record(.failed(.transfer("x")))
        let unknown = UUID()
        func task(_ id: UUID, _ offset: Int) -> String { TransferIdentifier(download: id, offset: offset).description }
        let plan = LaunchReconciliation.plan(
            records: [queued, stopped, completed, cancelled, failed],
            tasks: [
                task(queued.id, 65536), task(queued.id, 0), task(stopped.id, 0), task(completed.id, 0),
                task(cancelled.id, 0), task(unknown, 0), "someone-else",
            ],
            delivered: [
                task(queued.id, 16384), task(stopped.id, 0), task(failed.id, 0), task(completed.id, 0),
                task(unknown, 0), "someone-else",
            ])
        #expect(plan.adopt == [queued.id: task(queued.id, 0)])
        #expect(
            plan.cancel
                == [task(queued.id, 65536), task(completed.id, 0), task(cancelled.id, 0), task(unknown, 0)].sorted())
        #expect(plan.cancelKeepingResumeData == [task(stopped.id, 0)])
        #expect(plan.keep == [task(queued.id, 16384), task(stopped.id, 0), task(failed.id, 0)].sorted())
        #expect(plan.discard == [task(completed.id, 0), task(unknown, 0)].sorted())
    }

    @Test("Launch: a running HLS download keeps a task per resource; a paused one keeps none and no resume data")
    func reconciliationOfManyResources() {
        var running = record(.downloading)
        running.kind = "hls"
        var paused = record(.stopped(.user))
        paused.kind = "hls"
        var progressive = record(.queued)
        progressive.kind = ProgressiveDownloadPerformer.kind
        func task(_ id: UUID, _ key: String) -> String {
            BackgroundFetch.identifier(download: id, key: key).description
        }
        let plan = LaunchReconciliation.plan(
            records: [running, paused, progressive],
            tasks: [
                task(running.id, "segment 2"), task(running.id, "segment 1"), task(paused.id, "segment 1"),
                task(paused.id, "segment 2"), TransferIdentifier(download: progressive.id, offset: 0).description,
                TransferIdentifier(download: progressive.id, offset: 16384).description,
            ],
            delivered: [task(running.id, "segment 3"), task(paused.id, "segment 3")])
        #expect(plan.adoptAll.keys.sorted() == [running.id])
        #expect(
            plan.adoptAll[running.id]?.sorted()
                == [task(running.id, "segment 1"), task(running.id, "segment 2")].sorted())
        #expect(plan.adopt == [progressive.id: TransferIdentifier(download: progressive.id, offset: 0).description])
        #expect(
            plan.cancel
                == [
                    task(paused.id, "segment 1"), task(paused.id, "segment 2"),
                    TransferIdentifier(download: progressive.id, offset: 16384).description,
                ].sorted())
        #expect(plan.cancelKeepingResumeData.isEmpty)
        #expect(plan.keep == [task(running.id, "segment 3"), task(paused.id, "segment 3")].sorted())
    }

    @Test("A resource's task identifier is stable, a TransferIdentifier, and differs between keys")
    func resourceIdentifiers() {
        let download = UUID()
        let first = BackgroundFetch.identifier(download: download, key: "https://a.example/seg1.ts")
        #expect(first == BackgroundFetch.identifier(download: download, key: "https://a.example/seg1.ts"))
        #expect(TransferIdentifier(first.description) == first)
        #expect(first.offset >= 0)
        // FNV-1a of the empty key is its offset basis (masked to 63 bits): fixed across launches.
        #expect(BackgroundFetch.identifier(download: download, key: "").offset == 0x4bf2_9ce4_8422_2325)
        let keys = (0..<2000).map { "https://a.example/seg\($0).ts" }
        #expect(Set(keys.map { BackgroundFetch.identifier(download: download, key: $0).offset }).count == keys.count)
        #expect(BackgroundFetch.collisions(keys + [keys[7]], download: download).isEmpty, "a key twice is one resource")
    }
}
