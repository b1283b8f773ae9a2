import Foundation
import MediaStore
import MediaSupport

/// Points where a test holds a download's run (an ``OfflineDownload`` or
/// an ``HLSDownload``), injected at its creation: none is set by default,
/// and the download only calls what is set.
final class DownloadRunHooks: Sendable {
    /// Awaited by a run once it ended (done or failed), before it applies the result.
    let result = Locked<(@Sendable () async -> Void)?>(nil)
    /// Called by `pause()`, `resume()` and `cancel()` once they changed the
    /// state, before they stop or start a run and tell observers (a test
    /// holds one call there while another runs).
    let transition = Locked<(@Sendable () -> Void)?>(nil)
    /// Called by an offline run that has every byte, on the store's write
    /// queue, once it found itself still the downloading run and before it
    /// holds the entry (a test pauses or cancels it there).
    let hold = Locked<(@Sendable () -> Void)?>(nil)

    init() {}
}
