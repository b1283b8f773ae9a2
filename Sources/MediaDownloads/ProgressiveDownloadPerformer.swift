import Foundation
import MediaStore
import MediaStreaming

/// Downloads one file through the cache's loader (`Range` requests of the
/// missing chunks only): the performer of ``OfflineDownloader`` and the
/// queue's built-in one.
public struct ProgressiveDownloadPerformer: DownloadPerformer {
    /// The kind of records it performs (also records whose kind is `nil`).
    public static let kind = "progressive"

    public var kind: String { Self.kind }

    public init() {}

    public func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
        -> [StoredEntry]
    {
        let loader = context.cache.loader(for: record.url, cacheKey: record.cacheKey, headers: record.headers)
        do {
            let version = try await loader.downloadAll(priority: record.priority) { bytes, total in
                context.report(bytes: bytes, total: total)
            }
            return [StoredEntry(key: record.cacheKey, version: version)]
        } catch {
            throw DownloadError(error)
        }
    }

    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}
