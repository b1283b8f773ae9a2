// The module is empty outside iOS (Live Activities are iOS's): only the
// check package Tests/AVFoundationCheck compiles this elsewhere, on Linux
// (with ACTIVITYKIT_STAND_IN, against its API stand-in of ActivityKit).
#if canImport(ActivityKit) && (os(iOS) || ACTIVITYKIT_STAND_IN)
    import ActivityKit
    import Foundation
    import MediaDownloads

    /// The attributes of the one download activity: its static part; the
    /// dynamic part is ``MediaDownloads/DownloadActivityState``.
    @available(iOS 16.2, *)
    public struct DownloadActivityAttributes: ActivityAttributes, Sendable, Hashable {
        public typealias ContentState = DownloadActivityState

        /// What the activity is about, as the widget shows it ("Downloads").
        public var name: String
        /// What the widget's cancel-all control opens; the app hands it to
        /// ``DownloadLiveActivity/handle(_:)``.
        public var cancelAllURL: URL

        public init(name: String, cancelAllURL: URL) {
            self.name = name
            self.cancelAllURL = cancelAllURL
        }
    }

    /// Shows a ``MediaDownloads/DownloadActivityFeed``'s activity as one
    /// Live Activity, and performs its cancel-all.
    ///
    /// - A ``MediaDownloads/DownloadActivityChange/start(_:)`` requests the
    ///   Live Activity (`Activity.request(attributes:content:pushType:)`, no
    ///   push updates); when one of these attributes' type already runs (left
    ///   by an earlier launch of the app), that one is updated instead: never two.
    ///   One left running while the feed shows nothing is ended by ``run()``.
    /// - An update updates it (`update(_:)`); an update with none running
    ///   (its start was lost, or an earlier request failed) requests one.
    /// - An end ends it with the final state (`end(_:dismissalPolicy:)`):
    ///   the default dismissal (it stays on the Lock Screen a while) for a
    ///   completed, failed or cancelled end, at once for an idle one
    ///   (nothing to report).
    /// - A request ActivityKit refuses (Live Activities turned off, too many)
    ///   is kept in ``requestFailure``; the downloads go on without it.
    ///
    /// The cancel-all control is a URL (``DownloadActivityAttributes/cancelAllURL``),
    /// not an App Intent: a Live Activity's intent buttons need iOS 17, and
    /// an intent is made by the system with no way to be handed the feed,
    /// where the URL reaches the app's own handler (`onOpenURL`), which
    /// holds it. The cost: the URL brings the app to the foreground.
    @available(iOS 16.2, *)
    @MainActor
    public final class DownloadLiveActivity {
        public let attributes: DownloadActivityAttributes
        /// Where the downloads come from and cancel-all goes.
        public let feed: DownloadActivityFeed
        private var activity: Activity<DownloadActivityAttributes>?
        /// The last refusal of `Activity.request`, if any.
        public private(set) var requestFailure: (any Error)?

        public init(attributes: DownloadActivityAttributes, feed: DownloadActivityFeed) {
            self.attributes = attributes
            self.feed = feed
        }

        /// Shows the feed's changes until the calling task is cancelled.
        ///
        /// When the feed shows nothing at the start (nothing in flight: no
        /// change will come), a Live Activity of these attributes' type an
        /// earlier launch left running is ended at once; else the first
        /// change updates it.
        public func run() async {
            let changes = await feed.changes()
            if await feed.state == nil { await endUnbacked() }
            for await change in changes {
                await apply(change)
            }
        }

        /// Shows one change.
        public func apply(_ change: DownloadActivityChange) async {
            let content = ActivityContent(state: change.state, staleDate: nil)
            switch change {
            case .start, .update:
                if let running = running() {
                    await running.update(content)
                    return
                }
                do {
                    activity = try Activity.request(attributes: attributes, content: content, pushType: nil)
                    requestFailure = nil
                } catch {
                    requestFailure = error
                }
            case .end(let state):
                guard let running = running() else { return }
                activity = nil
                await running.end(content, dismissalPolicy: state.phase == .idle ? .immediate : .default)
            }
        }

        /// Performs the cancel-all when `url` is ``DownloadActivityAttributes/cancelAllURL``:
        /// returns each download's cancel result
        /// (``MediaDownloads/DownloadActivityFeed/cancelAll()``), or `nil`
        /// for another URL.
        public func handle(_ url: URL) async -> [UUID: Result<Void, DownloadError>]? {
            guard url == attributes.cancelAllURL else { return nil }
            return await feed.cancelAll()
        }

        /// Ends every running Live Activity of these attributes' type at
        /// once (the feed backs none).
        private func endUnbacked() async {
            activity = nil
            for leftover in Activity<DownloadActivityAttributes>.activities
            where leftover.activityState == .active || leftover.activityState == .stale {
                await leftover.end(nil, dismissalPolicy: .immediate)
            }
        }

        /// The Live Activity shown: this one's, else one an earlier launch left running.
        private func running() -> Activity<DownloadActivityAttributes>? {
            if let activity, activity.activityState == .active || activity.activityState == .stale { return activity }
            activity = Activity<DownloadActivityAttributes>.activities.first {
                $0.activityState == .active || $0.activityState == .stale
            }
            return activity
        }
    }
#endif
