import Foundation

/// Moves a download's bytes as download-to-file tasks that a system
/// service may run while the app is suspended or not running (on Apple
/// platforms a background `URLSession`). The queue's progressive
/// downloads go through one when
/// ``DownloadQueueConfiguration/backgroundTransfer`` is set; without it
/// they stream through the cache's loader in the foreground.
///
/// A task is named by the ``TransferRequest/identifier`` it was started
/// with (``TransferIdentifier``), which the service keeps across a relaunch
/// of the app. Finished tasks, and those that failed, are delivered to
/// ``inbox`` under their name; the service must deliver each task's end
/// exactly once, and none of a task cancelled by ``cancel(_:)``.
///
/// A name may be started again while an earlier task of it still runs
/// (a download stopped and resumed at once): tasks are cancelled by
/// their ``TransferTaskHandle``, which names one task, so that a run
/// never cancels the task another run started under the same name.
public protocol BackgroundTransfer: Sendable {
    /// The identifier of its session (the one
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)` names).
    var sessionIdentifier: String { get }

    /// Where finished tasks are delivered (kept there until a download takes them).
    var inbox: TransferInbox { get }

    /// Starts a download-to-file task for `request`, from `resumeData`
    /// when given (what ``cancel(_:)`` or a failed task produced for the
    /// same identifier). Returns the handle of the task started.
    func start(_ request: TransferRequest, resumeData: Data?) async throws(DownloadError) -> TransferTaskHandle

    /// Cancels the task `task`, if it runs (no other task of its name).
    /// Returns the data to resume it with, when the service produced some.
    func cancel(_ task: TransferTaskHandle) async -> Data?

    /// The tasks the service still runs (also those started before a relaunch).
    func tasks() async -> [TransferTaskInfo]

    /// Keeps the completion handler of
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// if `session` is one of its sessions (see
    /// ``TransferInbox/handleEvents(completionHandler:)``); returns whether it is.
    func handleEvents(forSession session: String, completionHandler: @escaping @Sendable () -> Void) -> Bool
}

extension BackgroundTransfer {
    /// Keeps the handler when `session` is ``sessionIdentifier``.
    public func handleEvents(forSession session: String, completionHandler: @escaping @Sendable () -> Void) -> Bool {
        guard session == sessionIdentifier else { return false }
        inbox.handleEvents(completionHandler: completionHandler)
        return true
    }
}

/// One download-to-file task to start.
public struct TransferRequest: Sendable, Hashable {
    /// The task's name: ``TransferIdentifier/description`` of its download and offset.
    public var identifier: String
    public var url: URL
    /// Headers sent with the request (a `Range` header is added for ``range``).
    public var headers: [String: String]
    /// The bytes asked for; `nil`: the whole resource. An upper bound of
    /// `Int.max` asks for everything from the lower one.
    public var range: Range<Int>?
    /// The network settings of its download's conditions.
    public var network: TransferNetworkPolicy

    public init(
        identifier: String, url: URL, headers: [String: String] = [:], range: Range<Int>? = nil,
        network: TransferNetworkPolicy = TransferNetworkPolicy(conditions: .any)
    ) {
        self.identifier = identifier
        self.url = url
        self.headers = headers
        self.range = range
        self.network = network
    }

    /// ``headers`` with the `Range` header of ``range``.
    public var allHeaders: [String: String] {
        var headers = headers
        if let range, !range.isEmpty {
            let last = range.upperBound == Int.max ? "" : String(range.upperBound - 1)
            headers["Range"] = "bytes=\(range.lowerBound)-\(last)"
        }
        return headers
    }
}

/// One task of a service, apart from any other started under the same
/// name: on Apple platforms its session and its `taskIdentifier`.
public struct TransferTaskHandle: Sendable, Hashable, CustomStringConvertible {
    /// The session that runs it.
    public var session: String
    /// Its number in ``session`` (unique there).
    public var number: Int

    public init(session: String, number: Int) {
        self.session = session
        self.number = number
    }

    public var description: String { "\(session)#\(number)" }
}

/// A task the service runs.
public struct TransferTaskInfo: Sendable, Hashable {
    /// Its name (its request's ``TransferRequest/identifier``).
    public var identifier: String
    /// The one task it is (to cancel it).
    public var handle: TransferTaskHandle
    /// Bytes received so far.
    public var bytesReceived: Int

    public init(identifier: String, handle: TransferTaskHandle, bytesReceived: Int = 0) {
        self.identifier = identifier
        self.handle = handle
        self.bytesReceived = bytesReceived
    }
}

/// The response head of a finished task (header names in lower case).
public struct TransferResponse: Sendable, Hashable, Codable {
    public var statusCode: Int
    public var headers: [String: String]

    public init(statusCode: Int, headers: [String: String] = [:]) {
        self.statusCode = statusCode
        self.headers = Dictionary(
            headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// How a task ended.
public enum TransferOutcome: Sendable, Hashable {
    /// The body is in `file` (the inbox's own copy: removed once imported or discarded).
    case file(URL, TransferResponse)
    /// It failed; `resumeData` continues it, when the service produced some.
    case failed(reason: String, resumeData: Data?)
}

/// The end of task ``identifier``.
public struct TransferCompletion: Sendable, Hashable {
    public var identifier: String
    public var outcome: TransferOutcome

    public init(identifier: String, outcome: TransferOutcome) {
        self.identifier = identifier
        self.outcome = outcome
    }
}

/// The name of a task: the download it is for and the offset of the
/// range it fetches, `"<download id>/<offset>"`.
public struct TransferIdentifier: Sendable, Hashable, CustomStringConvertible {
    public var download: UUID
    public var offset: Int

    public init(download: UUID, offset: Int) {
        self.download = download
        self.offset = offset
    }

    /// Parses `string`; `nil` when it is not one (a task of someone else's).
    public init?(_ string: String) {
        guard string.utf8.count <= 64 else { return nil }
        let parts = string.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let download = UUID(uuidString: String(parts[0])), let offset = Int(parts[1]),
            offset >= 0, String(offset) == parts[1]
        else { return nil }
        self.init(download: download, offset: offset)
    }

    public var description: String { "\(download.uuidString)/\(offset)" }
}

/// The data a download's interrupted task resumes with, kept in the
/// queue's index with its record (``DownloadRecord/resumeData``).
public struct TransferResumeData: Sendable, Hashable, Codable {
    /// The largest resume data kept (larger is dropped: the range is fetched again).
    public static let limit = 1 << 20

    /// The task it resumes.
    public var identifier: String
    public var data: Data

    /// `nil` when `data` is larger than ``limit``.
    public init?(identifier: String, data: Data) {
        guard data.count <= Self.limit else { return nil }
        self.identifier = identifier
        self.data = data
    }
}
