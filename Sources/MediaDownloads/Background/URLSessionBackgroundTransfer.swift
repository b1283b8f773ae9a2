// The background URLSession adapter of BackgroundTransfer. Compiled on Apple
// platforms; elsewhere only by the check package Tests/AVFoundationCheck
// (with URLSESSION_STAND_IN, against its stand-in of the background-session
// API), where this file is compiled outside MediaDownloads.
#if canImport(Darwin) || URLSESSION_STAND_IN
    import Foundation
    #if URLSESSION_STAND_IN
        import MediaDownloads
        import URLSessionStandIn
    #endif

    /// A ``BackgroundTransfer`` over background `URLSession`s: the queue's
    /// transfers go on while the app is suspended or not running, and the
    /// system relaunches the app with their events.
    ///
    /// - Two sessions: `identifier` for downloads that are not
    ///   discretionary, `identifier + ".discretionary"` for those that are
    ///   (`isDiscretionary` is a setting of the session), and so do tasks
    ///   started while the app is in the background (`inBackground`); both
    ///   send launch events. Each request carries its download's
    ///   ``TransferNetworkPolicy``: `allowsCellularAccess`,
    ///   `allowsExpensiveNetworkAccess`, `allowsConstrainedNetworkAccess`.
    /// - A task's `taskDescription` is its ``TransferRequest/identifier``
    ///   (the system keeps it across relaunches); its ``TransferTaskHandle``
    ///   is its session's identifier and its `taskIdentifier`, which Apple
    ///   documents as unique within its session.
    /// - The delegate moves each finished file into the ``inbox`` before its
    ///   callback returns (the system removes the file then); a failure is
    ///   delivered with the resume data of its error's `userInfo`, and so
    ///   is a cancel by the system (its error's
    ///   `NSURLErrorBackgroundTaskCancelledReasonKey`), unlike a cancel of
    ///   ``cancel(_:)``, whose resume data goes to its caller.
    ///   `urlSessionDidFinishEvents(forBackgroundURLSession:)` is passed to
    ///   ``TransferInbox/didFinishEvents(forSession:)`` with its session:
    ///   each session's events' handler is kept and called apart.
    ///
    /// Create it at launch and open the queue with it before the app
    /// delegate's `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// hands the handler to ``DownloadQueue/handleEventsForBackgroundURLSession(_:completionHandler:)``:
    /// opening the queue lists the sessions' tasks, which creates them, and a
    /// session created again with its identifier receives the events of the
    /// tasks that ended while the app was not running.
    public final class URLSessionBackgroundTransfer: NSObject, BackgroundTransfer, URLSessionDownloadDelegate,
        @unchecked Sendable
    {
        public let sessionIdentifier: String
        public let inbox: TransferInbox
        private let lock = NSLock()
        private var sessions: [Bool: URLSession] = [:]
        /// The tasks ``cancel(_:)`` cancelled: their ends are not delivered
        /// (the system's own cancels are, as failures).
        private var cancelling: Set<TransferTaskHandle> = []
        private let delegateQueue: OperationQueue
        private let inBackground: @Sendable () -> Bool

        /// - parameters:
        ///   - identifier: the identifier of the queue's session (one per queue).
        ///   - inbox: where finished files go (a folder of the app's container).
        ///   - inBackground: whether the app is in the background now: a
        ///     task started then goes through the discretionary session, as
        ///     the system treats such transfers. `false` by default.
        public init(
            identifier: String, inbox: TransferInbox, inBackground: @escaping @Sendable () -> Bool = { false }
        ) {
            sessionIdentifier = identifier
            self.inbox = inbox
            self.inBackground = inBackground
            delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
            super.init()
        }

        /// The identifier of the session of discretionary downloads.
        public var discretionaryIdentifier: String { sessionIdentifier + ".discretionary" }

        /// Whether `identifier` names one of its sessions.
        public func isSession(_ identifier: String) -> Bool {
            identifier == sessionIdentifier || identifier == discretionaryIdentifier
        }

        /// The session of discretionary downloads or of the others,
        /// created on first use.
        private func session(discretionary: Bool) -> URLSession {
            lock.lock()
            defer { lock.unlock() }
            if let session = sessions[discretionary] { return session }
            let configuration = URLSessionConfiguration.background(
                withIdentifier: discretionary ? discretionaryIdentifier : sessionIdentifier)
            configuration.isDiscretionary = discretionary
            configuration.sessionSendsLaunchEvents = true
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: delegateQueue)
            sessions[discretionary] = session
            return session
        }

        /// Creates both sessions (the events of tasks that ended while the
        /// app was not running are delivered to them).
        public func activate() {
            _ = session(discretionary: false)
            _ = session(discretionary: true)
        }

        private func allTasks() async -> [(task: URLSessionTask, session: URLSession)] {
            var tasks: [(task: URLSessionTask, session: URLSession)] = []
            for discretionary in [false, true] {
                let session = session(discretionary: discretionary)
                let listed = await withCheckedContinuation { continuation in
                    session.getAllTasks { continuation.resume(returning: $0) }
                }
                tasks += listed.map { ($0, session) }
            }
            return tasks
        }

        // MARK: BackgroundTransfer

        /// Keeps the handler when `session` is one of its two sessions.
        public func handleEvents(forSession session: String, completionHandler: @escaping @Sendable () -> Void)
            -> Bool
        {
            guard isSession(session) else { return false }
            // Each session its own slot: both may have events at one launch.
            inbox.handleEvents(forSession: session, completionHandler: completionHandler)
            return true
        }

        public func start(_ request: TransferRequest, resumeData: Data?) async throws(DownloadError)
            -> TransferTaskHandle
        {
            let network = TransferNetworkPolicy(
                conditions: DownloadConditions(isDiscretionary: request.network.isDiscretionary),
                startedInBackground: inBackground())
            let session = session(discretionary: network.isDiscretionary)
            let task: URLSessionDownloadTask
            if let resumeData {
                task = session.downloadTask(withResumeData: resumeData)
            } else {
                var urlRequest = URLRequest(url: request.url)
                for (name, value) in request.allHeaders { urlRequest.setValue(value, forHTTPHeaderField: name) }
                urlRequest.allowsCellularAccess = request.network.allowsCellularAccess
                urlRequest.allowsExpensiveNetworkAccess = request.network.allowsExpensiveNetworkAccess
                urlRequest.allowsConstrainedNetworkAccess = request.network.allowsConstrainedNetworkAccess
                task = session.downloadTask(with: urlRequest)
            }
            task.taskDescription = request.identifier
            task.resume()
            return Self.handle(of: task, in: session)
        }

        /// A task's handle: its session's identifier and its `taskIdentifier`
        /// (unique in its session).
        private static func handle(of task: URLSessionTask, in session: URLSession) -> TransferTaskHandle {
            TransferTaskHandle(session: session.configuration.identifier ?? "", number: task.taskIdentifier)
        }

        public func cancel(_ handle: TransferTaskHandle) async -> Data? {
            // A task cancelled already (or ended) is not cancelled again.
            guard
                let task = await allTasks().first(where: { task, session in
                    Self.handle(of: task, in: session) == handle && task.state != .canceling
                        && task.state != .completed
                })?.task
            else { return nil }
            _ = lock.withLock { cancelling.insert(handle) }
            guard let download = task as? URLSessionDownloadTask else {
                task.cancel()
                return nil
            }
            return await withCheckedContinuation { continuation in
                download.cancel(byProducingResumeData: { continuation.resume(returning: $0) })
            }
        }

        public func tasks() async -> [TransferTaskInfo] {
            let tasks = await allTasks()
            // The callbacks the sessions queued before (the ends of tasks
            // that finished while the app was not running, delivered when a
            // session is created again) run first: a task that ended is in
            // the inbox when the queue looks for it, never started again.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                delegateQueue.addOperation { continuation.resume() }
            }
            return tasks.compactMap { task, session in
                guard let identifier = task.taskDescription, task.state != .completed, task.state != .canceling else {
                    return nil
                }
                return TransferTaskInfo(
                    identifier: identifier, handle: Self.handle(of: task, in: session),
                    bytesReceived: Int(task.countOfBytesReceived))
            }
        }

        // MARK: URLSessionDownloadDelegate

        public func urlSession(
            _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
        ) {
            guard let identifier = downloadTask.taskDescription else { return }
            let http = downloadTask.response as? HTTPURLResponse
            var headers: [String: String] = [:]
            for (name, value) in http?.allHeaderFields ?? [:] {
                if let name = name as? String, let value = value as? String { headers[name] = value }
            }
            let response = TransferResponse(statusCode: http?.statusCode ?? 0, headers: headers)
            do {
                try inbox.deliver(identifier: identifier, file: location, response: response)
            } catch {
                // Not kept: the download fetches the range again.
                inbox.deliverFailure(identifier: identifier, reason: error.description, resumeData: nil)
            }
        }

        public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            let ours = lock.withLock { cancelling.remove(Self.handle(of: task, in: session)) != nil }
            // Without an error the file was delivered by the callback before.
            guard let error, let identifier = task.taskDescription else { return }
            // A cancel of ours: its resume data went to `cancel(_:)`'s caller.
            // One by the system (background updates off, resources short,
            // the app force-quit: `NSURLErrorBackgroundTaskCancelledReasonKey`)
            // is a failure its download is told of.
            let nsError = error as NSError
            if ours, nsError.domain == NSURLErrorDomain, nsError.code == NSURLErrorCancelled { return }
            let resumeData = nsError.userInfo[NSURLSessionDownloadTaskResumeData] as? Data
            inbox.deliverFailure(identifier: identifier, reason: error.localizedDescription, resumeData: resumeData)
        }

        public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
            inbox.didFinishEvents(forSession: session.configuration.identifier ?? sessionIdentifier)
        }
    }
#endif
