import MediaStreaming

/// What happens to a queued download; ``DownloadLifecycle`` says what
/// status it leads to.
public enum DownloadEvent: Sendable, Hashable, CustomStringConvertible {
    /// A slot is free and its conditions are met: it starts fetching.
    case start
    /// Its conditions stopped being met (or were not met when its turn came).
    case conditionsUnmet([WaitReason])
    /// Its conditions are met again.
    case conditionsMet
    /// A higher priority took its connection: back in the queue, bytes kept.
    case yield
    /// Stopped by the app or the person.
    case stop(StopReason)
    /// Resumed (or retried after a failure): queued again, in resume order.
    case resume
    /// Every byte is stored.
    case finish
    case fail(DownloadError)
    /// Cancelled: it fails with ``DownloadError/cancelled``.
    case cancel
    /// Its removal started.
    case remove
    /// The index was loaded after a relaunch: a transfer that was running
    /// was interrupted and is queued again.
    case relaunch
    /// The completed entry is no longer complete in the store (removed or
    /// evicted by someone else): it is queued to fetch what is missing.
    case entryLost

    public var description: String {
        switch self {
        case .start: "start"
        case .conditionsUnmet(let reasons): "conditions unmet (\(reasons.map(\.description).joined(separator: ", ")))"
        case .conditionsMet: "conditions met"
        case .yield: "yield"
        case .stop(let reason): "stop (\(reason))"
        case .resume: "resume"
        case .finish: "finish"
        case .fail(let failure): "fail (\(failure))"
        case .cancel: "cancel"
        case .remove: "remove"
        case .relaunch: "relaunch"
        case .entryLost: "entry lost"
        }
    }
}
