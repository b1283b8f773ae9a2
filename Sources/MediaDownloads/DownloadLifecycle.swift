import MediaStreaming

/// The download state machine: every status change of a download (a
/// queued one, or a ``MediaDownload``) goes through ``next(_:on:)``, and
/// an event a status does not take is an error
/// (``DownloadError/transition(status:event:)``) rather than a silent
/// change. A ``MediaDownload``'s pause is `stop(.user)`, its cancel
/// `remove` (removing is its cancelled: dropped by its downloader, the
/// bytes cached).
///
/// | from | events it takes |
/// |---|---|
/// | queued | start → downloading; conditionsUnmet → waiting; stop → stopped; cancel → failed(userCancelled); remove; relaunch, conditionsMet, yield → queued |
/// | waiting | conditionsMet → queued; conditionsUnmet → waiting (new reasons); stop; cancel; remove; relaunch → waiting |
/// | downloading | finish → completed; fail → failed; conditionsUnmet → waiting; yield, relaunch → queued; stop; cancel; remove |
/// | stopped | resume → queued; cancel; remove; relaunch → stopped |
/// | completed | remove; entryLost → queued; relaunch → completed |
/// | failed | resume → queued; remove; relaunch → failed |
/// | removing | relaunch → removing (the removal is finished after a relaunch) |
public enum DownloadLifecycle {
    /// The status `event` leads to from `status`.
    public static func next(_ status: DownloadStatus, on event: DownloadEvent) throws(DownloadError)
        -> DownloadStatus
    {
        switch (status, event) {
        case (.removing, .relaunch): return .removing
        case (.removing, _): break
        case (_, .remove): return .removing
        case (.queued, .start): return .downloading
        case (.queued, .relaunch), (.queued, .conditionsMet), (.queued, .yield): return .queued
        case (.queued, .conditionsUnmet(let reasons)), (.waiting, .conditionsUnmet(let reasons)),
            (.downloading, .conditionsUnmet(let reasons)):
            guard !reasons.isEmpty else { break }
            return .waiting(reasons)
        case (.waiting, .conditionsMet): return .queued
        case (.waiting, .relaunch): return status
        case (.downloading, .finish): return .completed
        case (.downloading, .fail(let failure)): return .failed(failure)
        case (.downloading, .yield), (.downloading, .relaunch): return .queued
        case (.queued, .stop(let reason)), (.waiting, .stop(let reason)), (.downloading, .stop(let reason)):
            return .stopped(reason)
        case (.queued, .cancel), (.waiting, .cancel), (.downloading, .cancel), (.stopped, .cancel):
            return .failed(.cancelled)
        case (.stopped, .resume), (.failed, .resume): return .queued
        case (.stopped, .relaunch), (.completed, .relaunch), (.failed, .relaunch): return status
        case (.completed, .entryLost): return .queued
        default: break
        }
        throw .transition(status: status, event: event)
    }
}
