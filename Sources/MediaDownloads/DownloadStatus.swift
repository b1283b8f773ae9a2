import MediaStreaming

/// Where a download stands: a queued one's is kept in the download index,
/// so it survives a relaunch; a ``MediaDownload``'s state is read from it.
/// Changes only through ``DownloadLifecycle``.
public enum DownloadStatus: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Waiting for its turn (a free slot, in queue order).
    case queued
    /// Its conditions are not met; it starts when they are.
    case waiting([WaitReason])
    /// Fetching.
    case downloading
    /// Stopped by the app or the person; ``DownloadEvent/resume`` queues it again.
    case stopped(StopReason)
    /// Every byte is in the store, held by the download (``DownloadQueue/holder(of:)``).
    case completed
    /// Ended without its bytes; ``DownloadEvent/resume`` retries.
    case failed(DownloadError)
    /// Its entries are being removed; the record goes with them.
    case removing

    public var description: String {
        switch self {
        case .queued: "queued"
        case .waiting(let reasons): "waiting (\(reasons.map(\.description).joined(separator: ", ")))"
        case .downloading: "downloading"
        case .stopped(let reason): "stopped (\(reason))"
        case .completed: "completed"
        case .failed(let failure): "failed (\(failure))"
        case .removing: "removing"
        }
    }

    /// Whether it will go on by itself (queued, waiting or downloading).
    public var isActive: Bool {
        switch self {
        case .queued, .waiting, .downloading: true
        default: false
        }
    }
}
