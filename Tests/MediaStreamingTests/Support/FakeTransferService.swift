import Foundation
import MediaDownloads
import MediaSupport

/// A background transfer service in memory, standing for the system's:
/// it outlives the "process" (each ``Connection`` is one app process with
/// its own inbox), keeps running tasks while no process is attached, and
/// delivers the tasks that ended meanwhile when a process attaches again.
///
/// Tasks end when a test says so (``finish(_:fault:)``, ``fail(_:resumeData:)``),
/// or at once when ``autoFinish`` is set. Bodies come from ``resources``.
final class FakeTransferService: Sendable {
    enum Fault: Sendable {
        /// The file loses its last `bytes` bytes.
        case truncate(Int)
        /// The response says another range than the one asked for.
        case wrongContentRange
    }

    struct State {
        var resources: [URL: Data] = [:]
        var etags: [URL: String] = [:]
        /// The tasks running, by number (several may have one name).
        var running: [Int: TransferRequest] = [:]
        var lastNumber = 0
        /// Tasks that ended and are being handed over, by number: still
        /// listed by `tasks()` until delivered, as the system's are (the
        /// adapter's `tasks()` returns once the callbacks queued before it
        /// ran), so an ended task is never seen neither running nor delivered.
        var ending: [Int: String] = [:]
        /// Every task started, in order, with the resume data it was given.
        var started: [(request: TransferRequest, resumeData: Data?)] = []
        var cancelled: [String] = []
        /// Ends not delivered yet: no process attached.
        var undelivered: [(identifier: String, file: URL?, response: TransferResponse?, resumeData: Data?)] = []
        var attached: TransferInbox?
        var autoFinish = false
        /// Faults of the next ends, in order.
        var faults: [Fault] = []
        /// Faults of the next ends of the tasks of one resource (by
        /// ``name(of:)``), in order (before ``faults``).
        var taskFaults: [String: [Fault]] = [:]
        /// Ends of the tasks of one resource (by ``name(of:)``) that fail
        /// (with resume data) when they end at once (``autoFinish``).
        var taskFailures: [String: Int] = [:]
        /// The most tasks that ran at once.
        var mostRunning = 0
        /// Each end carries a new `ETag` (the resource changes all the time).
        var rotateETags = false
        var ends = 0
        /// Bytes each running task says it received.
        var received: [String: Int] = [:]
    }

    let state = Locked(State())
    let scratch: URL
    let sessionIdentifier = "test.background"

    init(scratch: URL) throws {
        self.scratch = scratch
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    func publish(_ data: Data, at url: URL, etag: String = "\"v1\"") {
        state.withLock {
            $0.resources[url] = data
            $0.etags[url] = etag
        }
    }

    var started: [(request: TransferRequest, resumeData: Data?)] { state.withLock { $0.started } }

    /// The resource a request asks for: its URL, and its range if any.
    static func name(of request: TransferRequest) -> String {
        name(request.url, range: request.range)
    }

    static func name(_ url: URL, range: Range<Int>? = nil) -> String {
        url.absoluteString + (range.map { " \($0.lowerBound)-\($0.upperBound)" } ?? "")
    }
    /// The names of the tasks running (a name twice when two of its tasks run).
    var running: [String] { state.withLock { $0.running.values.map(\.identifier).sorted() } }
    var cancelled: [String] { state.withLock { $0.cancelled } }

    /// A process attaching: its inbox gets the ends that arrived while none was.
    func connect(inbox: TransferInbox) -> Connection {
        let pending = state.withLock { state in
            state.attached = inbox
            defer { state.undelivered = [] }
            return state.undelivered
        }
        for end in pending { deliver(end, to: inbox) }
        return Connection(service: self, inbox: inbox)
    }

    /// The process ended (killed): ends are kept for the next one.
    func detach() { state.withLock { $0.attached = nil } }

    /// Runs a task of `request` started by an earlier process (none told of it).
    func run(_ request: TransferRequest) {
        state.withLock { state in
            state.lastNumber += 1
            state.running[state.lastNumber] = request
        }
    }

    /// The number of the oldest task of name `identifier` running.
    private static func oldest(_ identifier: String, in state: State) -> Int? {
        state.running.filter { $0.value.identifier == identifier }.keys.min()
    }

    /// Ends the oldest task of name `identifier` with its body (through `fault` if given).
    func finish(_ identifier: String, fault: Fault? = nil) {
        let end = state.withLock { state -> (number: Int, request: TransferRequest, data: Data?, etag: String?)? in
            guard let number = Self.oldest(identifier, in: state),
                let request = state.running.removeValue(forKey: number)
            else { return nil }
            state.ending[number] = identifier
            state.ends += 1
            let etag = state.rotateETags ? "\"v\(state.ends + 1)\"" : state.etags[request.url]
            return (number, request, state.resources[request.url], etag)
        }
        guard let end else { return }
        defer { state.withLock { _ = $0.ending.removeValue(forKey: end.number) } }
        guard let data = end.data else {
            return handOver((identifier, nil, TransferResponse(statusCode: 404), nil))
        }
        var range = end.request.range.map { $0.clamped(to: 0..<data.count) } ?? 0..<data.count
        var body = Data(data[range])
        let status = end.request.range == nil ? 200 : 206
        var headers = ["Content-Length": String(body.count), "ETag": end.etag ?? ""]
        switch fault {
        case .truncate(let bytes): body = body.dropLast(bytes)
        case .wrongContentRange: range = (range.lowerBound + 1)..<range.upperBound
        case nil: break
        }
        if status == 206 {
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(data.count)"
        }
        let file = scratch.appendingPathComponent(UUID().uuidString)
        try! body.write(to: file)
        handOver((identifier, file, TransferResponse(statusCode: status, headers: headers), nil))
    }

    /// Ends the oldest task of name `identifier` with a failure and `resumeData`.
    func fail(_ identifier: String, resumeData: Data?) {
        let ended = state.withLock { state -> Int? in
            guard let number = Self.oldest(identifier, in: state) else { return nil }
            state.running[number] = nil
            state.ending[number] = identifier
            return number
        }
        guard let ended else { return }
        defer { state.withLock { _ = $0.ending.removeValue(forKey: ended) } }
        handOver((identifier, nil, nil, resumeData))
    }

    private func handOver(_ end: (identifier: String, file: URL?, response: TransferResponse?, resumeData: Data?)) {
        let inbox = state.withLock { state -> TransferInbox? in
            if state.attached == nil { state.undelivered.append(end) }
            return state.attached
        }
        if let inbox { deliver(end, to: inbox) }
    }

    private func deliver(
        _ end: (identifier: String, file: URL?, response: TransferResponse?, resumeData: Data?), to inbox: TransferInbox
    ) {
        if let file = end.file, let response = end.response {
            try! inbox.deliver(identifier: end.identifier, file: file, response: response)
        } else {
            inbox.deliverFailure(
                identifier: end.identifier, reason: "status \(end.response?.statusCode ?? 0)",
                resumeData: end.resumeData)
        }
    }

    /// One process's side of the service.
    struct Connection: BackgroundTransfer {
        let service: FakeTransferService
        let inbox: TransferInbox
        var sessionIdentifier: String { service.sessionIdentifier }

        func start(_ request: TransferRequest, resumeData: Data?) async throws(DownloadError) -> TransferTaskHandle {
            let (number, auto, fault, fails) = service.state.withLock { state -> (Int, Bool, Fault?, Bool) in
                state.lastNumber += 1
                let number = state.lastNumber
                state.running[number] = request
                state.started.append((request, resumeData))
                state.mostRunning = max(state.mostRunning, state.running.count)
                let name = FakeTransferService.name(of: request)
                let fails = state.autoFinish && state.taskFailures[name, default: 0] > 0
                if fails { state.taskFailures[name]! -= 1 }
                if let fault = state.taskFaults[name]?.first {
                    state.taskFaults[name]!.removeFirst()
                    return (number, state.autoFinish, fault, fails)
                }
                return (number, state.autoFinish, state.faults.isEmpty ? nil : state.faults.removeFirst(), fails)
            }
            if auto {
                let service = service
                let id = request.identifier
                Task {
                    if fails {
                        service.fail(id, resumeData: Data("partial \(id)".utf8))
                    } else {
                        service.finish(id, fault: fault)
                    }
                }
            }
            return handle(number)
        }

        private func handle(_ number: Int) -> TransferTaskHandle {
            TransferTaskHandle(session: service.sessionIdentifier, number: number)
        }

        func cancel(_ task: TransferTaskHandle) async -> Data? {
            service.state.withLock { state in
                guard task.session == service.sessionIdentifier,
                    let request = state.running.removeValue(forKey: task.number)
                else { return nil }
                state.cancelled.append(request.identifier)
                return Data("resume \(request.identifier)".utf8)
            }
        }

        func tasks() async -> [TransferTaskInfo] {
            service.state.withLock { state in
                let names = state.running.mapValues(\.identifier).merging(state.ending) { first, _ in first }
                return names.sorted { $0.key < $1.key }.map {
                    TransferTaskInfo(
                        identifier: $0.value, handle: handle($0.key), bytesReceived: state.received[$0.value] ?? 0)
                }
            }
        }
    }
}
