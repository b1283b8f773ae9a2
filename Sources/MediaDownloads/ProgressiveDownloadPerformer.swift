import Foundation
import MediaStore
import MediaStreaming

/// Downloads one file through the cache's loader (`Range` requests of the
/// missing chunks only): the performer of ``OfflineDownloader`` and the
/// queue's built-in one.
///
/// The missing ranges are fetched over ``connections`` connections at once
/// (`ResourceLoader.downloadAll(priority:connections:progress:)`): one
/// segment each, within the cache's connections per host.
public struct ProgressiveDownloadPerformer: DownloadPerformer {
    /// The kind of records it performs (also records whose kind is `nil`).
    public static let kind = "progressive"

    /// Connections a download uses by default: 4, the cache's default
    /// connections per host (`StreamingConfiguration.connectionsPerHost`),
    /// so one download fills what the scheduler allows a host, and a
    /// player still takes one of them first.
    public static let defaultConnections = 4

    public var kind: String { Self.kind }

    /// Connections one download fetches over at once (at least 1; never
    /// more than the cache's connections per host).
    public let connections: Int

    public init(connections: Int = Self.defaultConnections) {
        self.connections = max(1, connections)
    }

    public func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
        -> [StoredEntry]
    {
        let loader = context.cache.loader(for: record.url, cacheKey: record.cacheKey, headers: record.headers)
        do {
            let version = try await loader.downloadAll(priority: record.priority, connections: connections) {
                bytes, total in
                context.report(bytes: bytes, total: total)
            }
            return [StoredEntry(key: record.cacheKey, version: version)]
        } catch {
            throw DownloadError(error)
        }
    }

    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}
