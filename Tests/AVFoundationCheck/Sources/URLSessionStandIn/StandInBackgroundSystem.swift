import Foundation

/// The model of the system's background transfer service behind the
/// stand-in's `URLSession`: what the adapter relies on, each from the page
/// cited.
///
/// - **Tasks outlive the app.** Tasks of a background session go on after
///   the app is suspended or terminated, and a session created again with
///   the same identifier gets them back (`getAllTasks`) with their
///   `taskDescription`
///   (https://developer.apple.com/documentation/foundation/downloading-files-in-the-background,
///   https://developer.apple.com/documentation/foundation/urlsessionconfiguration/background(withidentifier:)).
///   ``standInTerminateApp()`` ends the app: its sessions get nothing more.
/// - **Download to a file.** A finished task's body is a temporary file
///   handed to `urlSession(_:downloadTask:didFinishDownloadingTo:)` and
///   removed when that method returns; then
///   `urlSession(_:task:didCompleteWithError:)` with `nil`
///   (https://developer.apple.com/documentation/foundation/urlsessiondownloaddelegate/urlsession(_:downloadtask:didfinishdownloadingto:)).
/// - **Resume data.** `cancel(byProducingResumeData:)` hands data that
///   `downloadTask(withResumeData:)` continues from; a task that fails
///   (a lost connection) has resume data under
///   `NSURLSessionDownloadTaskResumeData` in its error's `userInfo`
///   (https://developer.apple.com/documentation/foundation/urlsessiondownloadtask/cancel(byproducingresumedata:),
///   https://developer.apple.com/documentation/foundation/pausing-and-resuming-downloads).
///   A cancelled task also ends with `didCompleteWithError` and
///   `NSURLErrorCancelled`.
/// - **Delegate callbacks on the session's queue**, one at a time (the
///   adapter's queue is serial)
///   (https://developer.apple.com/documentation/foundation/urlsession/init(configuration:delegate:delegatequeue:)).
/// - **Events delivered to a relaunched app.** Tasks that end while no
///   session of their identifier exists (the app not running) are
///   delivered, in order, when the app creates that session again, then
///   `urlSessionDidFinishEvents(forBackgroundURLSession:)`
///   (https://developer.apple.com/documentation/uikit/uiapplicationdelegate/application(_:handleeventsforbackgroundurlsession:completionhandler:)).
///
/// Not modelled (reasoned about in the documentation, not checked):
/// when the system schedules discretionary tasks, network conditions,
/// the app's launch into the background itself, the format of real resume data.
@_spi(StandIn) public final class StandInBackgroundSystem: @unchecked Sendable {
    public static let shared = StandInBackgroundSystem()

    /// A task started (or resumed from resume data), as the test sees it.
    public struct Start: Sendable, Hashable {
        public var description: String?
        public var range: String?
        /// The bytes the resume data said were received; `nil`: a fresh start.
        public var resumedFrom: Int64?
        public var isDiscretionary: Bool
        public var allowsExpensiveNetworkAccess: Bool
        public var allowsConstrainedNetworkAccess: Bool
    }

    private enum Event: @unchecked Sendable {
        case finished(URLSessionDownloadTask, file: URL)
        case failed(URLSessionTask, NSError)
    }

    private struct Resume: Codable {
        var request: URLRequest
        var received: Int64
        var description: String?
    }

    private let lock = NSLock()
    private var resources: [URL: (data: Data, etag: String)] = [:]
    private var live: [Int: URLSessionDownloadTask] = [:]
    private var resumedFrom: [Int: Int64] = [:]
    private var attached: [String: URLSession] = [:]
    private var pending: [String: [Event]] = [:]
    private var starts: [Start] = []
    private var nextNumber = 1
    private let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
        "urlsession-stand-in-\(UUID().uuidString)")

    private init() {
        try? FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    // MARK: The test's side

    /// Forgets every task, session and resource.
    public func standInReset() {
        lock.withLock {
            resources = [:]
            live = [:]
            resumedFrom = [:]
            attached = [:]
            pending = [:]
            starts = []
        }
    }

    /// Serves `data` at `url` (with `Range` requests answered 206).
    public func standInPublish(_ data: Data, at url: URL, etag: String = "\"s1\"") {
        lock.withLock { resources[url] = (data, etag) }
    }

    /// Every task started or resumed, in order.
    public var standInStarts: [Start] { lock.withLock { starts } }

    /// The descriptions of the tasks not completed.
    public var standInRunning: [String] {
        lock.withLock { live.values.compactMap(\.taskDescription).sorted() }
    }

    /// The app is terminated: its sessions receive nothing more; tasks go on.
    public func standInTerminateApp() {
        lock.withLock { attached = [:] }
    }

    /// Task `description` received `bytes` so far (what resume data will say).
    public func standInReceive(_ description: String, bytes: Int64) {
        guard let task = task(described: description) else { return }
        task.lock.withLock { task.received = bytes }
    }

    /// Task `description` ends with its body (`truncatedBy` bytes short).
    @discardableResult
    public func standInFinish(_ description: String, truncatedBy: Int = 0) -> Bool {
        guard let task = task(described: description), let url = task.request.url else { return false }
        let resource = lock.withLock { resources[url] }
        var status = 404
        var body = Data()
        var headers: [String: String] = [:]
        if let resource {
            var range = 0..<resource.data.count
            status = 200
            if let header = task.request.value(forHTTPHeaderField: "Range"), let asked = Self.parse(header) {
                let upper = min(asked.upper.map { $0 + 1 } ?? resource.data.count, resource.data.count)
                range = asked.lower..<max(asked.lower, upper)
                status = 206
                headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(resource.data.count)"
            }
            body = resource.data[range].dropLast(truncatedBy)
            headers["Content-Length"] = String(range.count)
            headers["ETag"] = resource.etag
        }
        let file = scratch.appendingPathComponent(UUID().uuidString + ".tmp")
        try? body.write(to: file)
        task.lock.withLock {
            task.storedResponse = HTTPURLResponse(
                url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
            task.received = Int64(body.count)
        }
        end(task, with: .finished(task, file: file))
        return true
    }

    /// The system cancels task `description` (background updates turned
    /// off, say): it ends with `NSURLErrorCancelled` and the reason, and resume data.
    @discardableResult
    public func standInSystemCancel(_ description: String) -> Bool {
        guard let task = task(described: description) else { return false }
        let error = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorCancelled,
            userInfo: [
                NSURLSessionDownloadTaskResumeData: resumeData(of: task),
                NSURLErrorBackgroundTaskCancelledReasonKey: NSURLErrorCancelledReasonBackgroundUpdatesDisabled,
            ])
        end(task, with: .failed(task, error))
        return true
    }

    /// Task `description` fails (a lost connection) with resume data.
    @discardableResult
    public func standInFail(_ description: String) -> Bool {
        guard let task = task(described: description) else { return false }
        let error = NSError(
            domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost,
            userInfo: [NSURLSessionDownloadTaskResumeData: resumeData(of: task)])
        end(task, with: .failed(task, error))
        return true
    }

    private static func parse(_ header: String) -> (lower: Int, upper: Int?)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let lower = Int(bounds[0]) else { return nil }
        return (lower, bounds[1].isEmpty ? nil : Int(bounds[1]))
    }

    // MARK: The stand-in's side

    func attach(_ session: URLSession) {
        let identifier = session.configuration.identifier ?? ""
        let events = lock.withLock { () -> [Event] in
            attached[identifier] = session
            return pending.removeValue(forKey: identifier) ?? []
        }
        guard !events.isEmpty else { return }
        for event in events { deliver(event, to: session) }
        session.delegateQueue.addOperation {
            session.delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: session)
        }
    }

    func makeTask(in session: URLSession, request: URLRequest, resumingAt received: Int64?) -> URLSessionDownloadTask {
        lock.withLock {
            let task = URLSessionDownloadTask(
                sessionIdentifier: session.configuration.identifier ?? "", request: request, number: nextNumber)
            nextNumber += 1
            if let received {
                task.received = received
                if received > 0 { resumedFrom[task.number] = received }
            }
            return task
        }
    }

    func makeTask(in session: URLSession, resumeData: Data) -> URLSessionDownloadTask {
        guard let resume = try? JSONDecoder().decode(Resume.self, from: resumeData) else {
            // Unusable resume data: the task fails once resumed.
            let task = makeTask(in: session, request: URLRequest(url: URL(string: "about:blank")!), resumingAt: nil)
            lock.withLock { resumedFrom[task.number] = -1 }
            return task
        }
        let task = makeTask(in: session, request: resume.request, resumingAt: resume.received)
        lock.withLock { resumedFrom[task.number] = resume.received }
        return task
    }

    func resume(_ task: URLSessionTask) {
        guard let task = task as? URLSessionDownloadTask else { return }
        let unusable = lock.withLock { () -> Bool in
            let session = attached[task.sessionIdentifier]
            starts.append(
                Start(
                    description: task.taskDescription, range: task.request.value(forHTTPHeaderField: "Range"),
                    resumedFrom: resumedFrom[task.number],
                    isDiscretionary: session?.configuration.isDiscretionary ?? false,
                    allowsExpensiveNetworkAccess: task.request.allowsExpensiveNetworkAccess,
                    allowsConstrainedNetworkAccess: task.request.allowsConstrainedNetworkAccess))
            if resumedFrom[task.number] == -1 { return true }
            live[task.number] = task
            return false
        }
        task.lock.withLock { task.storedState = .running }
        if unusable {
            end(task, with: .failed(task, NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotDecodeContentData)))
        }
    }

    /// Cancels `task`; its resume data.
    func cancel(_ task: URLSessionTask) -> Data? {
        guard lock.withLock({ live[task.number] }) != nil else { return nil }
        let data = resumeData(of: task)
        end(task, with: .failed(task, NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)))
        return data
    }

    func tasks(of identifier: String) -> [URLSessionTask] {
        lock.withLock { live.values.filter { $0.sessionIdentifier == identifier }.sorted { $0.number < $1.number } }
    }

    private func task(described description: String) -> URLSessionDownloadTask? {
        lock.withLock { live.values.first { $0.taskDescription == description } }
    }

    private func resumeData(of task: URLSessionTask) -> Data {
        let resume = Resume(
            request: task.request, received: task.countOfBytesReceived, description: task.taskDescription)
        return (try? JSONEncoder().encode(resume)) ?? Data()
    }

    /// `task` ended: delivered to its session if the app has it, else kept for the relaunch.
    private func end(_ task: URLSessionTask, with event: Event) {
        let session = lock.withLock { () -> URLSession? in
            live[task.number] = nil
            guard let session = attached[task.sessionIdentifier] else {
                pending[task.sessionIdentifier, default: []].append(event)
                return nil
            }
            return session
        }
        task.lock.withLock { task.storedState = .completed }
        if let session { deliver(event, to: session) }
    }

    private func deliver(_ event: Event, to session: URLSession) {
        session.delegateQueue.addOperation {
            switch event {
            case .finished(let task, let file):
                (session.delegate as? any URLSessionDownloadDelegate)?.urlSession(
                    session, downloadTask: task, didFinishDownloadingTo: file)
                // The system removes the file once the method returns.
                try? FileManager.default.removeItem(at: file)
                (session.delegate as? any URLSessionTaskDelegate)?.urlSession(
                    session, task: task, didCompleteWithError: nil)
            case .failed(let task, let error):
                (session.delegate as? any URLSessionTaskDelegate)?.urlSession(
                    session, task: task, didCompleteWithError: error)
            }
        }
    }
}
