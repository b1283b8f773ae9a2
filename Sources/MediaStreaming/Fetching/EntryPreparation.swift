/// The preparation of the store entry a probe's first response goes into
/// (`MediaStore/prepareEntry(forKey:length:options:)`, a commit with its
/// `fsync`), run as a task of its own: beside that response when a
/// player waits (its first bytes do not wait for the commit), awaited
/// first otherwise.
///
/// Ownership: ``ResourceFetcher/acceptFirst(_:requested:_:)`` makes one
/// for each first response a probe accepts (a probe retried before its
/// content information resolved makes another, and the earlier one binds
/// nothing), which the probe holds (``Transfer/entryPreparation``), as do the
/// transfers planned while it runs; those transfers' sinks write nothing
/// until it is done (``ResourceFetcher/entryBound(_:waiting:)``). Its end
/// binds the version prepared (the probe's sink, the fetcher's
/// ``ResourceFetcher/entryVersion``) only while it is still the fetcher's
/// current preparation (``ResourceFetcher/entryPreparation``: not replaced
/// by a newer probe's, not dropped by a change of the content) and its
/// probe was not stopped; otherwise it binds nothing, and changes no
/// state but its own. Preparations of one fetcher run one after another
/// (``ResourceFetcher/lastPreparation``): a late one never replaces the
/// entry a newer one made.
///
/// Only touched on its fetcher's executor (hence unchecked).
final class EntryPreparation: @unchecked Sendable {
    /// The entry version it bound, once done; `nil` while it runs, and
    /// when it bound nothing (abandoned, or refused by the store).
    private(set) var version: UInt64?
    /// The entry version the store made, once done, bound or not (`nil`
    /// when refused): what a change of the content drops.
    private(set) var committed: UInt64?
    /// Whether it has ended (bound or not).
    private(set) var isDone = false
    /// The task that runs it, set by its maker as it starts it.
    var task: Task<Void, Never>?

    /// Waits for its end.
    func done(isolation: isolated (any Actor)? = #isolation) async { await task?.value }

    /// Records its end: the version the store made, and the one bound
    /// (`nil` when it bound nothing).
    func end(committed: UInt64?, binding version: UInt64?) {
        self.committed = committed
        self.version = version
        isDone = true
    }
}
