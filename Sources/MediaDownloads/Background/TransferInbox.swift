import Foundation
import MediaSupport

/// Where a ``BackgroundTransfer`` delivers the ends of its tasks, kept on
/// disk until a download takes them: a task that finished while the app
/// was not running, or whose download does not run now, is imported when
/// it runs again (after a relaunch too).
///
/// Each delivery is a file pair in ``directory``: the body, moved there
/// (the service removes its temporary file once the delegate callback
/// returns), then a description written atomically. A body without its
/// description is removed when the inbox opens; a description without
/// its body is delivered as a failure.
///
/// It also holds the completion handler of
/// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
/// (``handleEvents(completionHandler:)``): called once the service told
/// that it delivered all its events (``didFinishEvents()``) and every
/// delivery of a download that runs was imported (or failed).
public final class TransferInbox: Sendable {
    /// The most deliveries kept: beyond it, new ones are refused (their
    /// downloads fetch the range again).
    public static let capacity = 4096

    private struct Description: Codable {
        var identifier: String
        var response: TransferResponse?
        var reason: String?
        var resumeData: Data?
    }

    private struct State {
        var delivered: [String: TransferCompletion] = [:]
        var waiters: [String: CheckedContinuation<TransferCompletion?, Never>] = [:]
        /// Deliveries taken and not settled yet.
        var inFlight: Set<String> = []
        /// The events' completion handler of each session (`""`: the
        /// session of a transfer that has one).
        var handlers: [String: @Sendable () -> Void] = [:]
        /// The sessions that told they delivered their events.
        var finishedEvents: Set<String> = []
        /// Whether a delivery is one a download will take now (``setClaims(_:)``);
        /// `nil`: every delivery is (no queue looked yet).
        var claims: (@Sendable (String) -> Bool)?

        /// The handlers to call now, those whose time came (taken out of the state).
        mutating func dueHandlers() -> [@Sendable () -> Void] {
            let sessions = handlers.keys.filter { finishedEvents.contains($0) }
            guard !sessions.isEmpty, inFlight.isEmpty else { return [] }
            let awaited = claims.map { claims in delivered.keys.contains(where: claims) } ?? !delivered.isEmpty
            guard !awaited else { return [] }
            return sessions.sorted().compactMap { session in
                finishedEvents.remove(session)
                return handlers.removeValue(forKey: session)
            }
        }
    }

    /// The folder of the deliveries.
    public let directory: URL
    private let state = Locked(State())

    /// Opens the inbox in `directory` (created when missing) with the
    /// deliveries kept there.
    ///
    /// - throws: ``DownloadError/transfer(_:)`` when the folder cannot be created or listed.
    public init(directory: URL) throws(DownloadError) {
        self.directory = directory
        let manager = FileManager.default
        let names: [String]
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
            names = try manager.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw .transfer("inbox \(directory.path): \(error)")
        }
        var delivered: [String: TransferCompletion] = [:]
        for name in names where name.hasSuffix(".json") && delivered.count < Self.capacity {
            let stem = String(name.dropLast(".json".count))
            let url = directory.appendingPathComponent(name)
            guard let size = try? manager.attributesOfItem(atPath: url.path)[.size] as? Int, size <= 4 << 20,
                let data = try? Data(contentsOf: url),
                let description = try? JSONDecoder().decode(Description.self, from: data),
                Self.stem(of: description.identifier) == stem
            else {
                try? manager.removeItem(at: url)
                continue
            }
            delivered[description.identifier] = Self.completion(description, body: body(stem))
        }
        // Bodies whose description was never written: the delivery did not happen.
        for name in names where name.hasSuffix(".body") {
            let stem = String(name.dropLast(".body".count))
            if !delivered.values.contains(where: { Self.stem(of: $0.identifier) == stem }) {
                try? manager.removeItem(at: directory.appendingPathComponent(name))
            }
        }
        state.withLock { $0.delivered = delivered }
    }

    private static func stem(of identifier: String) -> String {
        identifier.map { $0.isLetter || $0.isNumber || $0 == "-" ? String($0) : "_" }.joined()
    }

    private func body(_ stem: String) -> URL { directory.appendingPathComponent(stem + ".body") }
    private func descriptionFile(_ stem: String) -> URL { directory.appendingPathComponent(stem + ".json") }

    private static func completion(_ description: Description, body: URL) -> TransferCompletion {
        let outcome: TransferOutcome
        if let response = description.response {
            outcome =
                FileManager.default.fileExists(atPath: body.path)
                ? .file(body, response) : .failed(reason: "the delivered body is missing", resumeData: nil)
        } else {
            outcome = .failed(reason: description.reason ?? "failed", resumeData: description.resumeData)
        }
        return TransferCompletion(identifier: description.identifier, outcome: outcome)
    }

    // MARK: Delivering (the service's side)

    /// Delivers the body of the finished task `identifier`: `file` is
    /// moved into the inbox before it returns (call it from the delegate
    /// callback that hands the file over).
    ///
    /// - throws: ``DownloadError/transfer(_:)`` when the inbox is full or
    ///   the file cannot be moved or described (the download fetches the range again).
    public func deliver(identifier: String, file: URL, response: TransferResponse) throws(DownloadError) {
        let stem = Self.stem(of: identifier)
        let target = body(stem)
        let manager = FileManager.default
        try checkRoom(for: identifier)
        do {
            try? manager.removeItem(at: target)
            try manager.moveItem(at: file, to: target)
            try write(Description(identifier: identifier, response: response), stem: stem)
        } catch {
            try? manager.removeItem(at: target)
            throw .transfer("inbox: \(error)")
        }
        hand(TransferCompletion(identifier: identifier, outcome: .file(target, response)))
    }

    /// Delivers the failure of task `identifier`, with the data to resume it.
    public func deliverFailure(identifier: String, reason: String, resumeData: Data?) {
        let kept = resumeData.flatMap { $0.count <= TransferResumeData.limit ? $0 : nil }
        let reason = String(reason.prefix(512))
        // Kept on disk when it can be; a failure not kept costs a fetch again, never bytes.
        if (try? checkRoom(for: identifier)) != nil {
            try? write(
                Description(identifier: identifier, reason: reason, resumeData: kept), stem: Self.stem(of: identifier))
        }
        hand(TransferCompletion(identifier: identifier, outcome: .failed(reason: reason, resumeData: kept)))
    }

    private func checkRoom(for identifier: String) throws(DownloadError) {
        let full = state.withLock { $0.delivered[identifier] == nil && $0.delivered.count >= Self.capacity }
        if full { throw .transfer("inbox full (\(Self.capacity) deliveries)") }
    }

    private func write(_ description: Description, stem: String) throws {
        try JSONEncoder().encode(description).write(to: descriptionFile(stem), options: .atomic)
    }

    /// Gives `completion` to its waiter, or keeps it.
    private func hand(_ completion: TransferCompletion) {
        let waiter = state.withLock { state -> CheckedContinuation<TransferCompletion?, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: completion.identifier) else {
                state.delivered[completion.identifier] = completion
                return nil
            }
            state.inFlight.insert(completion.identifier)
            return waiter
        }
        waiter?.resume(returning: completion)
    }

    // MARK: Taking (the downloads' side)

    /// The identifiers a download waits for (``take(_:)``).
    package var waiting: [String] { state.withLock { Array($0.waiters.keys) } }

    /// The identifiers delivered and not taken.
    public var pending: [String] { state.withLock { Array($0.delivered.keys) } }

    /// Takes the delivery of `identifier` when there is one (then
    /// ``settle(_:)`` it once imported).
    package func takeIfDelivered(_ identifier: String) -> TransferCompletion? {
        state.withLock { state in
            guard let completion = state.delivered.removeValue(forKey: identifier) else { return nil }
            state.inFlight.insert(identifier)
            return completion
        }
    }

    /// Waits for the delivery of `identifier` and takes it (then
    /// ``settle(_:)`` it once imported); `nil` when the calling task is cancelled.
    package func take(_ identifier: String) async -> TransferCompletion? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<TransferCompletion?, Never>) in
                let ready = state.withLock { state -> TransferCompletion?? in
                    if Task.isCancelled { return .some(nil) }
                    if let completion = state.delivered.removeValue(forKey: identifier) {
                        state.inFlight.insert(identifier)
                        return .some(completion)
                    }
                    state.waiters[identifier]?.resume(returning: nil)
                    state.waiters[identifier] = continuation
                    return .none
                }
                if case .some(let completion) = ready { continuation.resume(returning: completion) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: identifier) }?.resume(returning: nil)
        }
    }

    /// The delivery `completion` (taken) is done with: its files are
    /// removed, and the events' completion handler called if it was the last.
    package func settle(_ completion: TransferCompletion) {
        removeFiles(of: completion.identifier)
        let handlers = state.withLock { state -> [@Sendable () -> Void] in
            state.inFlight.remove(completion.identifier)
            return state.dueHandlers()
        }
        for handler in handlers { handler() }
    }

    /// Drops the delivery of `identifier` (a download that is gone), files and all.
    package func discard(_ identifier: String) {
        _ = state.withLock { $0.delivered.removeValue(forKey: identifier) }
        removeFiles(of: identifier)
        fireIfDue()
    }

    /// Tells which deliveries a download will take now (its download
    /// runs): until they are taken and imported, the events' handler
    /// waits for them. Before it is set, every delivery is waited for.
    /// Called with the inbox's lock held: `claims` must take no lock that
    /// is held while calling into the inbox.
    package func setClaims(_ claims: @escaping @Sendable (String) -> Bool) {
        state.withLock { $0.claims = claims }
        fireIfDue()
    }

    /// What the claims say changed (a download stopped or ended): calls
    /// the events' handler if nothing is waited for any more.
    package func reevaluate() { fireIfDue() }

    private func removeFiles(of identifier: String) {
        let stem = Self.stem(of: identifier)
        try? FileManager.default.removeItem(at: descriptionFile(stem))
        try? FileManager.default.removeItem(at: body(stem))
    }

    // MARK: Events of a relaunch

    /// Keeps the completion handler the system gave
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`:
    /// called once, after ``didFinishEvents()`` and once every delivery of
    /// a download that runs was taken and imported (or failed). Until a
    /// queue opened over the inbox, every delivery counts; deliveries of
    /// downloads that do not run (stopped, failed) stay on disk for their
    /// next run and are not waited for.
    public func handleEvents(completionHandler: @escaping @Sendable () -> Void) {
        handleEvents(forSession: "", completionHandler: completionHandler)
    }

    /// ``handleEvents(completionHandler:)`` for the session `session` of a
    /// transfer that has several (the system calls the app delegate once
    /// per session with events): each session's handler is kept apart and
    /// called after that session's ``didFinishEvents(forSession:)``.
    public func handleEvents(forSession session: String, completionHandler: @escaping @Sendable () -> Void) {
        let due = state.withLock { state -> (@Sendable () -> Void)? in
            // A second call for a session replaces its earlier handler, which is called now (never dropped).
            state.handlers.updateValue(completionHandler, forKey: session)
        }
        due?()
        fireIfDue()
    }

    /// The service delivered every event of the session (on Apple
    /// platforms `urlSessionDidFinishEvents(forBackgroundURLSession:)`).
    /// It may come before the handler (the session was created before the
    /// app delegate was called): the handler is then called when given,
    /// once no delivery taken is being imported.
    public func didFinishEvents() { didFinishEvents(forSession: "") }

    /// ``didFinishEvents()`` of the session `session` (see
    /// ``handleEvents(forSession:completionHandler:)``).
    public func didFinishEvents(forSession session: String) {
        state.withLock { _ = $0.finishedEvents.insert(session) }
        fireIfDue()
    }

    private func fireIfDue() {
        for handler in state.withLock({ $0.dueHandlers() }) { handler() }
    }
}
