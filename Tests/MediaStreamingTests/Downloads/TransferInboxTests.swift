import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

/// The inbox of background task ends on disk, and the import of a file
/// into the store, without a queue.
@Suite("Transfer inbox and import")
struct TransferInboxTests {
    let directory = temporaryPath("transfer-inbox")

    func file(_ bytes: Data) throws -> URL {
        let url = temporaryPath("transfer-file")
        try bytes.write(to: url)
        return url
    }

    @Test(
        "A delivery survives reopening; a body without its description is removed, a description without its body fails"
    )
    func persistence() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inbox = try TransferInbox(directory: directory)
        let source = try file(Data("body".utf8))
        let response = TransferResponse(statusCode: 206, headers: ["Content-Range": "bytes 0-3/10"])
        try inbox.deliver(identifier: "a/0", file: source, response: response)
        #expect(!FileManager.default.fileExists(atPath: source.path), "moved in before deliver returns")
        inbox.deliverFailure(identifier: "b/0", reason: "offline", resumeData: Data("r".utf8))
        // Left by a process killed between the move and the description.
        try Data("orphan".utf8).write(to: directory.appendingPathComponent("c_0.body"))
        // A description whose body went.
        try inbox.deliver(identifier: "d/0", file: try file(Data("gone".utf8)), response: response)
        try FileManager.default.removeItem(at: directory.appendingPathComponent("d_0.body"))

        let reopened = try TransferInbox(directory: directory)
        #expect(Set(reopened.pending) == ["a/0", "b/0", "d/0"])
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("c_0.body").path))
        let a = try #require(reopened.takeIfDelivered("a/0"))
        guard case .file(let body, let kept) = a.outcome else { throw FuzzlessFailure("a/0: \(a.outcome)") }
        #expect(try Data(contentsOf: body) == Data("body".utf8) && kept == response)
        #expect(reopened.takeIfDelivered("b/0")?.outcome == .failed(reason: "offline", resumeData: Data("r".utf8)))
        guard case .failed = reopened.takeIfDelivered("d/0")?.outcome else { throw FuzzlessFailure("d/0") }
        reopened.settle(a)
        #expect(!FileManager.default.fileExists(atPath: body.path), "settled: its files removed")
    }

    @Test("The events' handler: not before the events finished nor while a taken delivery is imported; once")
    func eventsHandler() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inbox = try TransferInbox(directory: directory)
        let calls = Locked(0)
        // Events finished before the handler came: called when it comes.
        let early = Locked(0)
        inbox.didFinishEvents()
        inbox.handleEvents { early.withLock { $0 += 1 } }
        #expect(early.current == 1)
        inbox.handleEvents { calls.withLock { $0 += 1 } }
        #expect(calls.current == 0, "not before the events finished")
        let waiter = Task { await inbox.take("a/0") }
        while inbox.waiting.isEmpty { await Task.yield() }
        try inbox.deliver(
            identifier: "a/0", file: try file(Data("x".utf8)), response: TransferResponse(statusCode: 200))
        let taken = try #require(await waiter.value)
        inbox.didFinishEvents()
        #expect(calls.current == 0, "a delivery taken and not imported yet")
        inbox.settle(taken)
        #expect(calls.current == 1)
        inbox.didFinishEvents()
        inbox.settle(taken)
        #expect(calls.current == 1, "called once")
        // A second handler replaces the first, which is called then (never dropped).
        let second = Locked(0)
        inbox.handleEvents { second.withLock { $0 += 1 } }
        inbox.handleEvents { second.withLock { $0 += 10 } }
        #expect(second.current == 1)
        inbox.didFinishEvents()
        #expect(second.current == 11)
    }

    @Test("Each session's events' handler has its own slot: called after its own session's events, once each")
    func handlerPerSession() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inbox = try TransferInbox(directory: directory)
        let calls = Locked<[String]>([])
        inbox.handleEvents(forSession: "plain") { calls.withLock { $0.append("plain") } }
        inbox.handleEvents(forSession: "discretionary") { calls.withLock { $0.append("discretionary") } }
        #expect(calls.current.isEmpty, "a second session's handler does not replace the first's")
        let taken = Task { await inbox.take("a/0") }
        while inbox.waiting.isEmpty { await Task.yield() }
        inbox.deliverFailure(identifier: "a/0", reason: "x", resumeData: nil)
        let delivery = try #require(await taken.value)
        inbox.didFinishEvents(forSession: "discretionary")
        #expect(calls.current.isEmpty, "a delivery taken and not settled yet")
        inbox.settle(delivery)
        #expect(calls.current == ["discretionary"], "only the session whose events finished")
        inbox.didFinishEvents(forSession: "plain")
        #expect(calls.current == ["discretionary", "plain"])
        inbox.didFinishEvents(forSession: "plain")
        inbox.didFinishEvents(forSession: "discretionary")
        #expect(calls.current.count == 2, "once each")
        // A handler of the same session replaces its earlier one, which is called then.
        inbox.handleEvents(forSession: "x") { calls.withLock { $0.append("x1") } }
        inbox.handleEvents(forSession: "x") { calls.withLock { $0.append("x2") } }
        #expect(calls.current.last == "x1")
    }

    @Test("The events' handler waits for deliveries a running download will take, not for others")
    func handlerWaitsForClaimedDeliveries() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inbox = try TransferInbox(directory: directory)
        let calls = Locked(0)
        inbox.deliverFailure(identifier: "running/0", reason: "x", resumeData: nil)
        inbox.deliverFailure(identifier: "stopped/0", reason: "x", resumeData: nil)
        inbox.handleEvents { calls.withLock { $0 += 1 } }
        inbox.didFinishEvents()
        #expect(calls.current == 0, "no queue looked yet: every delivery is waited for")
        let running = Locked<Set<String>>(["running/0"])
        inbox.setClaims { identifier in running.withLock { $0.contains(identifier) } }
        #expect(calls.current == 0, "the running download has not taken its delivery")
        let taken = try #require(inbox.takeIfDelivered("running/0"))
        #expect(calls.current == 0)
        inbox.settle(taken)
        #expect(calls.current == 1, "imported: called; the stopped download's delivery stays")
        #expect(inbox.pending == ["stopped/0"])
        // A download that stops no longer holds the handler back.
        inbox.handleEvents { calls.withLock { $0 += 10 } }
        inbox.didFinishEvents()
        #expect(calls.current == 11)
        inbox.deliverFailure(identifier: "running/0", reason: "y", resumeData: nil)
        inbox.handleEvents { calls.withLock { $0 += 100 } }
        inbox.didFinishEvents()
        #expect(calls.current == 11)
        running.withLock { $0 = [] }
        inbox.reevaluate()
        #expect(calls.current == 111)
    }

    @Test("A waiter cancelled gets nothing; what is delivered then is kept for the next one")
    func cancelledWaiter() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let inbox = try TransferInbox(directory: directory)
        let waiter = Task { await inbox.take("a/0") }
        while inbox.waiting.isEmpty { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value == nil)
        inbox.deliverFailure(identifier: "a/0", reason: "x", resumeData: nil)
        #expect(inbox.pending == ["a/0"])
        #expect(await inbox.take("a/0")?.identifier == "a/0")
    }

    @Test("Import: ranges into one entry version, complete with its digest; short file refused and removed")
    func importRanges() async throws {
        let test = try TestCache()
        let chunk = TestCache.chunkSize
        let data = Data((0..<(3 * chunk + 10)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let key = "import"
        let io = test.cache.storeIO
        func response(_ range: Range<Int>) -> TransferResponse {
            TransferResponse(
                statusCode: 206,
                headers: [
                    "Content-Range": "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(data.count)", "ETag": "e",
                ])
        }
        func request(_ range: Range<Int>) -> TransferRequest {
            TransferRequest(identifier: "i", url: URL(string: "https://x.invalid/a")!, range: range)
        }
        let second = chunk..<data.count
        let first = 0..<chunk
        let info = try await TransferredFileImporter.importFile(
            try file(data[second]), request: request(second), response: response(second), key: key, io: io)
        #expect(!info.isComplete && info.length == data.count)
        // A short file: refused, removed, nothing of it stored.
        let short = try file(data[first].dropLast(1))
        await #expect(throws: TransferImportError.sizeMismatch(expected: chunk, actual: chunk - 1)) {
            try await TransferredFileImporter.importFile(
                short, request: request(first), response: response(first), key: key, io: io)
        }
        #expect(!FileManager.default.fileExists(atPath: short.path))
        #expect(try test.store.cachedRanges(forKey: key) == [second])
        // Off a chunk boundary: refused.
        let odd = 1..<chunk
        await #expect(throws: TransferImportError.misaligned(offset: 1, chunkSize: chunk)) {
            try await TransferredFileImporter.importFile(
                try file(data[odd]), request: request(odd), response: response(odd), key: key, io: io)
        }
        let done = try await TransferredFileImporter.importFile(
            try file(data[first]), request: request(first), response: response(first), key: key, io: io)
        #expect(
            done.isComplete && done.version == info.version && done.contentDigest == ContentDigest(of: [UInt8](data)))
        #expect(try test.store.data(forKey: key) == data)
        #expect(done.metadata.etag == "e")
    }
}

private struct FuzzlessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
