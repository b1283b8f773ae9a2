import Foundation

/// What a queue opening with a ``BackgroundTransfer`` does with the tasks
/// the service still runs and the deliveries its ``TransferInbox`` kept,
/// given the downloads of its index: no task runs twice for one download,
/// none runs for a download that is gone, and nothing delivered for a
/// download that goes on is lost.
///
/// - A download that will run (queued, waiting, downloading) keeps one
///   task: the one of its lowest offset (the first range it misses);
///   its run adopts it rather than starting another. A download of many
///   resources (HLS: ``hasManyTasks(_:)``) keeps every task, one per
///   resource; its run adopts those of the resources it lacks and
///   cancels the others.
/// - A stopped or failed download keeps none: its tasks are cancelled,
///   their resume data kept in its record (not for a download of many
///   resources: its tasks start again).
/// - The tasks and deliveries of a download the index does not hold, or
///   that completed, was cancelled or is being removed, are cancelled and
///   dropped.
/// - Deliveries of a download that goes on (also stopped or failed, which
///   may be resumed) stay in the inbox: its next run imports them.
/// - Tasks and deliveries whose identifier is not a
///   ``TransferIdentifier`` are someone else's: left alone.
package struct LaunchReconciliation: Sendable, Equatable {
    /// Tasks to cancel, dropping what they fetched.
    package var cancel: [String] = []
    /// Tasks to cancel keeping their resume data in their download's record.
    package var cancelKeepingResumeData: [String] = []
    /// Deliveries to drop.
    package var discard: [String] = []
    /// The task each download that will run adopts.
    package var adopt: [UUID: String] = [:]
    /// The tasks each download of many resources (HLS) that will run
    /// keeps, one per resource: its run adopts those of resources it
    /// lacks, cancels the others.
    package var adoptAll: [UUID: [String]] = [:]
    /// Deliveries kept for the next run of their download.
    package var keep: [String] = []

    package init() {}

    package static func plan(records: [DownloadRecord], tasks: [String], delivered: [String]) -> LaunchReconciliation {
        var plan = LaunchReconciliation()
        let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var running: [UUID: [TransferIdentifier]] = [:]
        for task in tasks {
            guard let identifier = TransferIdentifier(task) else { continue }
            running[identifier.download, default: []].append(identifier)
        }
        for (download, identifiers) in running {
            let ordered = identifiers.sorted { $0.offset < $1.offset }
            let record = byID[download]
            switch record.map({ Self.fate(of: $0.status) }) ?? .gone {
            case .runs where record.map(Self.hasManyTasks) == true:
                // Its run takes those of the resources it still lacks and cancels the rest.
                plan.adoptAll[download] = ordered.map(\.description)
            case .runs:
                plan.adopt[download] = ordered[0].description
                plan.cancel += ordered.dropFirst().map(\.description)
            case .paused where record.map(Self.hasManyTasks) == true:
                // One record keeps one resume data: its resources' tasks start again.
                plan.cancel += ordered.map(\.description)
            case .paused:
                plan.cancelKeepingResumeData += ordered.map(\.description)
            case .gone:
                plan.cancel += ordered.map(\.description)
            }
        }
        for delivery in delivered {
            guard let identifier = TransferIdentifier(delivery) else { continue }
            if let record = byID[identifier.download], Self.fate(of: record.status) != .gone {
                plan.keep.append(delivery)
            } else {
                plan.discard.append(delivery)
            }
        }
        plan.cancel.sort()
        plan.cancelKeepingResumeData.sort()
        plan.discard.sort()
        plan.keep.sort()
        return plan
    }

    /// Whether `record`'s download fetches many resources, a task each
    /// (a kind other than progressive: HLS).
    package static func hasManyTasks(_ record: DownloadRecord) -> Bool {
        record.kind.map { $0 != ProgressiveDownloadPerformer.kind } ?? false
    }

    private enum Fate { case runs, paused, gone }

    private static func fate(of status: DownloadStatus) -> Fate {
        switch status {
        case .queued, .waiting, .downloading: .runs
        case .stopped: .paused
        case .failed(let failure): failure == .cancelled ? .gone : .paused
        case .completed, .removing: .gone
        }
    }
}
