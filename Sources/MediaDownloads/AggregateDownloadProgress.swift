import Foundation
import MediaStreaming

/// Progress over every download of a ``DownloadQueue`` batch: the downloads
/// active now and those that ended since the queue was last idle (the
/// aggregate of AVFoundation's parent progress).
public struct AggregateDownloadProgress: Sendable, Equatable {
    /// How far the batch is, as a download's progress: ``DownloadProgress/bytes``
    /// stored of the downloads that count (active, completed and stopped
    /// ones; failed and cancelled ones leave the totals) of
    /// ``DownloadProgress/total``, their lengths as far as known. Its state
    /// is the batch's: downloading while a download is active, cancelled
    /// after ``DownloadQueue/cancelAll()``, else completed (the counts say
    /// how each download ended).
    public var progress = DownloadProgress(state: .completed)
    /// Queued, waiting or downloading.
    public var active = 0
    public var completed = 0
    /// Failed, not counting cancellations.
    public var failed = 0
    /// Ended with ``DownloadError/cancelled``.
    public var cancelled = 0
    /// Stopped by the app or the person.
    public var stopped = 0
    /// Bytes per second fetched over the last few seconds; `nil` before
    /// there is anything to measure.
    public var throughput: Double?
    /// Seconds left at that throughput; `nil` when unknown.
    public var estimatedTimeRemaining: TimeInterval?

    public init() {}

    /// The progress's ``DownloadProgress/fraction`` (at most 1); 1 when
    /// nothing is left to fetch and nothing is active, 0 while lengths are unknown.
    public var fractionCompleted: Double {
        if progress.total > 0 { return min(1, progress.fraction) }
        return active == 0 ? 1 : 0
    }
}
