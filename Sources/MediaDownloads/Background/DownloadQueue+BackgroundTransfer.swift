import Foundation
import MediaSupport

extension DownloadQueue {
    /// Passes on the completion handler of
    /// `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// when `identifier` is the session of the queue's
    /// ``DownloadQueueConfiguration/backgroundTransfer``: it is called once
    /// the session delivered its events and every file a running download
    /// took was imported into the store (committed). Call it from the app
    /// delegate; when the queue is not open yet, call the transfer's
    /// ``BackgroundTransfer/handleEvents(forSession:completionHandler:)``.
    ///
    /// - returns: whether the session is the queue's (otherwise the handler is not kept).
    @discardableResult
    public nonisolated func handleEventsForBackgroundURLSession(
        _ identifier: String, completionHandler: @escaping @Sendable () -> Void
    ) -> Bool {
        configuration.backgroundTransfer?.handleEvents(forSession: identifier, completionHandler: completionHandler)
            ?? false
    }

    /// At opening: the tasks the background service still runs and the
    /// deliveries kept, against the index (``LaunchReconciliation``).
    func reconcileTransfers() async {
        guard let transfer = configuration.backgroundTransfer else { return }
        let tasks = await transfer.tasks()
        let plan = LaunchReconciliation.plan(
            records: records.values, tasks: tasks.map(\.identifier), delivered: transfer.inbox.pending)
        // The plan names tasks. A name it keeps keeps one task (the first
        // listed), its others are cancelled; a name it drops loses every task.
        let handles = Dictionary(grouping: tasks, by: \.identifier).mapValues { $0.map(\.handle) }
        let keptNames = Set(plan.adopt.values).union(plan.adoptAll.values.joined())
        for name in keptNames { for task in (handles[name] ?? []).dropFirst() { _ = await transfer.cancel(task) } }
        for name in Set(plan.cancel).subtracting(keptNames) {
            for task in handles[name] ?? [] { _ = await transfer.cancel(task) }
        }
        var kept: [UUID] = []
        for name in Set(plan.cancelKeepingResumeData).subtracting(keptNames) {
            var resume: TransferResumeData?
            for task in handles[name] ?? [] {
                if let data = await transfer.cancel(task) { resume = TransferResumeData(identifier: name, data: data) }
            }
            guard let identifier = TransferIdentifier(name), let resume else { continue }
            runners[identifier.download]?.edit { $0.resumeData = resume }
            kept.append(identifier.download)
        }
        for delivery in plan.discard { transfer.inbox.discard(delivery) }
        if !kept.isEmpty { await commitReporting(kept) }
        // The events' handler waits for the deliveries of downloads that run.
        for record in records.values { noteRunning(record.id, status: record.status) }
        let running = runningDownloads
        transfer.inbox.setClaims { identifier in
            guard let identifier = TransferIdentifier(identifier) else { return false }
            return running.withLock { $0.contains(identifier.download) }
        }
    }

    /// Keeps ``runningDownloads`` up to date with `status` of download `id`.
    nonisolated func noteRunning(_ id: UUID, status: DownloadStatus) {
        guard let transfer = configuration.backgroundTransfer else { return }
        let runs: Bool
        switch status {
        case .queued, .waiting, .downloading: runs = true
        default: runs = false
        }
        let changed = runningDownloads.withLock { running in
            runs ? running.insert(id).inserted : running.remove(id) != nil
        }
        if changed && !runs { transfer.inbox.reevaluate() }
    }
}
