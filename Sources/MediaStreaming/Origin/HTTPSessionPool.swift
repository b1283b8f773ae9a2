import Foundation
import MediaStore
import MediaSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The process-wide URLSessions that every ``HTTPOrigin`` sends through: one
/// per idle timeout, created on first use and never invalidated.
///
/// One session per origin, invalidated when the origin goes away, crashes
/// FoundationNetworking on Linux now and then: tearing a session down races
/// libdispatch's cancellation of the sources that watch libcurl's sockets
/// (swift-corelibs-foundation #4791 and #5469; the crash is a SIGSEGV in
/// `_dispatch_event_loop_drain`). A session that lives as long as the
/// process is never torn down. Its delegate routes callbacks by task, so
/// origins that share a session never see each other's responses.
enum HTTPSessionPool {
    /// A session and the delegate that turns its callbacks into responses.
    struct Client: @unchecked Sendable {  // URLSession is thread-safe; the delegate locks its state.
        let session: URLSession
        let delegate: HTTPSessionDelegate
    }

    /// Connections to one host that one session keeps open at most. Callers
    /// that schedule (``FetchScheduler``) hold their own, lower limit per
    /// cache; this one is shared by every origin in the process.
    static let connectionsPerHost = 32

    private static let clients = Locked<[TimeInterval: Client]>([:])

    /// The session for requests with `timeout` seconds of idle time allowed.
    static func client(timeout: TimeInterval) -> Client {
        clients.withLock { clients in
            if let client = clients[timeout] { return client }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            configuration.timeoutIntervalForRequest = timeout
            configuration.httpMaximumConnectionsPerHost = connectionsPerHost
            let delegate = HTTPSessionDelegate()
            let client = Client(
                session: URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil),
                delegate: delegate)
            clients[timeout] = client
            return client
        }
    }
}
