import Foundation
import MediaStreaming
import MediaSupport

/// Points where a test holds a download's runs (its ``DownloadRunner``'s),
/// injected at its creation: none is set by default, and the runner only
/// calls what is set.
package final class DownloadRunHooks: Sendable {
    /// Awaited by a run once it ended (done or failed), before it applies the result.
    package let result = Locked<(@Sendable () async -> Void)?>(nil)
    /// Called by `pause()`, `resume()` and `cancel()` once they changed the
    /// state, before they stop a run and tell observers and the owner (a
    /// test holds one call there while another runs).
    package let transition = Locked<(@Sendable () -> Void)?>(nil)
    /// Called by a run whose performer is done, on the store's write queue,
    /// once it found itself still the downloading run and before it holds
    /// the entries (a test pauses or cancels it there).
    package let hold = Locked<(@Sendable () -> Void)?>(nil)
    /// Called by each telling of the download's progress (a
    /// `MediaDownload`'s) with the snapshot it read, before it sets the
    /// download's `Progress` (a test holds one there while a later one
    /// goes through).
    package let publish = Locked<(@Sendable (DownloadProgress) -> Void)?>(nil)

    package init() {}
}
