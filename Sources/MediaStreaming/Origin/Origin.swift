import Foundation

/// Where the bytes of a resource come from when the store lacks them.
///
/// ``HTTPOrigin`` is the real one; tests wrap or replace it to count
/// requests and to inject faults. An origin answers one request with
/// the response head and a body streamed in pieces; it does not retry,
/// validate or cache — the loader does.
public protocol Origin: Sendable {
    /// Sends `request` and returns once the response head has arrived.
    ///
    /// - throws: ``OriginError`` when no response head arrives (connection
    ///   refused or dropped, timeout). HTTP error statuses are not thrown
    ///   here: they come back as a response for the caller to judge.
    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse
}
