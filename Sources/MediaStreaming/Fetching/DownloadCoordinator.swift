import Foundation

/// What a ``DownloadRunner`` asks of the actor that owns its downloads
/// (``ResourceFetcher``): the runner moves bytes and retries, the
/// coordinator judges responses, hands bytes to readers and the store,
/// and keeps the resource's state. Every call is on the coordinator's
/// executor (the runner runs isolated to it).
protocol DownloadCoordinator: Actor {
    /// The cache's scheduler every transfer is admitted by and yields to.
    nonisolated var scheduler: FetchScheduler { get }
    /// Whether `download` resolves the content information (it then runs
    /// even with no reader subscribed).
    func isResolving(_ download: Download) -> Bool
    /// The chunk boundary past which none of `download`'s readers wants
    /// bytes (`Int.max`: one reads to the end); `nil` with no reader.
    func wantedEnd(of download: Download) -> Int?
    /// The origin request for `range` of `download` (headers, validators).
    func request(for download: Download, range: Range<Int>) -> OriginRequest
    /// Counts a request about to be sent.
    func willSend(_ request: OriginRequest)
    /// Judges the response to `requested`: where its body lies in the
    /// resource, or `nil` when there is no body to read (a `304`).
    /// Throws a ``StreamingError`` for a response that cannot be used.
    func accept(_ response: OriginResponse, to requested: Range<Int>, for download: Download) async throws
        -> ExpectedBody?
    /// Counts body bytes received from the origin.
    func didReceive(byteCount: Int)
    /// Takes the next bytes of `download` (at its position).
    func receive(_ bytes: Data, into download: Download) async throws
    /// The body of a resource of unknown length ended at `length`: that is its length.
    func bodyEnded(_ download: Download, at length: Int) async throws
    /// A transient failure is about to be retried.
    func retrying(_ download: Download, after error: OriginError)
    /// `download` failed for good.
    func failed(_ download: Download, with error: StreamingError) async
    /// `download` ended (done, stopped, or left without readers).
    func finished(_ download: Download)
}
