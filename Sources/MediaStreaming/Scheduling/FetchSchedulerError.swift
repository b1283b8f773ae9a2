/// Why a transfer may not go on.
public enum FetchSchedulerError: Error, Sendable, Equatable {
    /// A playback transfer needed this one's connection to the host: end
    /// the transfer (what was fetched is kept) and ask again later.
    case preempted
    /// The waiting task was cancelled.
    case cancelled
}
