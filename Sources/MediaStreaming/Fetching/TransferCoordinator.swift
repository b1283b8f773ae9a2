import Foundation

/// What a ``TransferRunner`` asks of the actor that owns its transfers
/// (``ResourceFetcher``): the runner moves bytes and retries, the
/// coordinator judges responses, hands bytes to readers and the store,
/// and keeps the resource's state. Every call is on the coordinator's
/// executor (the runner runs isolated to it).
protocol TransferCoordinator: Actor {
    /// The cache's scheduler every transfer is admitted by and yields to.
    nonisolated var scheduler: FetchScheduler { get }
    /// Whether `transfer` resolves the content information (it then runs
    /// even with no reader subscribed).
    func isResolving(_ transfer: Transfer) -> Bool
    /// The offset past which none of `transfer`'s readers wants
    /// bytes (`Int.max`: one reads to the end); `nil` with no reader.
    func wantedEnd(of transfer: Transfer) -> Int?
    /// The origin request for `range` of `transfer` (headers, validators).
    func request(for transfer: Transfer, range: Range<Int>) -> OriginRequest
    /// Counts a request about to be sent.
    func willSend(_ request: OriginRequest)
    /// Judges the response to `requested`: where its body lies in the
    /// resource, or `nil` when there is no body to read (a `304`).
    /// Throws a ``StreamingError`` for a response that cannot be used.
    func accept(_ response: OriginResponse, to requested: Range<Int>, for transfer: Transfer) async throws
        -> ExpectedBody?
    /// Counts body bytes received from the origin.
    func didReceive(byteCount: Int)
    /// Takes the next bytes of `transfer` (at its position).
    func receive(_ bytes: Data, into transfer: Transfer) async throws
    /// The body of a resource of unknown length ended at `length`: that is its length.
    func bodyEnded(_ transfer: Transfer, at length: Int) async throws
    /// Stores what `transfer` received past its last whole chunk, as a
    /// short chunk (when the length is known and it stores): before a
    /// retry, and when it ends.
    func keepReceived(_ transfer: Transfer) async
    /// A transient failure is about to be retried.
    func retrying(_ transfer: Transfer, after error: OriginError)
    /// `transfer` failed for good.
    func failed(_ transfer: Transfer, with error: StreamingError) async
    /// `transfer` ended (done, stopped, or left without readers).
    func finished(_ transfer: Transfer)
}
