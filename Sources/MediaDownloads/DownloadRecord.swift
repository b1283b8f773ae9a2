import Foundation
import MediaStreaming

/// One download in the persistent queue, as the download index keeps it.
public struct DownloadRecord: Sendable, Hashable, Codable, Identifiable {
    /// Stable across relaunches.
    public var id: UUID
    /// What is downloaded.
    public var url: URL
    /// The cache key its bytes are stored under.
    public var cacheKey: String
    /// Headers sent with its origin requests.
    public var headers: [String: String]
    /// Which ``DownloadPerformer`` fetches it (``DownloadPerformer/kind``);
    /// `nil` for a progressive file (``ProgressiveDownloadPerformer``).
    public var kind: String?
    public var priority: FetchPriority
    public var conditions: DownloadConditions
    public var status: DownloadStatus
    /// Bytes stored and the total, when known.
    public var bytesStored: Int
    public var totalBytes: Int?
    /// Its place in the queue: the order in which downloads were started or
    /// resumed (lower runs first).
    public var queueOrder: UInt64
    /// Failed attempts since the last success or resume.
    public var attempts: Int
    public var created: Date
    /// The data its interrupted background task resumes with (see
    /// ``BackgroundTransfer``), kept until the task's range is imported.
    public var resumeData: TransferResumeData? = nil

    public init(
        id: UUID = UUID(), url: URL, cacheKey: String, headers: [String: String] = [:], kind: String? = nil,
        priority: FetchPriority = .download, conditions: DownloadConditions = .any, status: DownloadStatus = .queued,
        bytesStored: Int = 0, totalBytes: Int? = nil, queueOrder: UInt64, attempts: Int = 0, created: Date = Date()
    ) {
        self.id = id
        self.url = url
        self.cacheKey = cacheKey
        self.headers = headers
        self.kind = kind
        self.priority = priority
        self.conditions = conditions
        self.status = status
        self.bytesStored = bytesStored
        self.totalBytes = totalBytes
        self.queueOrder = queueOrder
        self.attempts = attempts
        self.created = created
    }

    /// Applies `event` through ``DownloadLifecycle``.
    public mutating func apply(_ event: DownloadEvent) throws(DownloadError) {
        status = try DownloadLifecycle.next(status, on: event)
    }
}
