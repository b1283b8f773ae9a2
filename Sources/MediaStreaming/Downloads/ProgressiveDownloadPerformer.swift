import Foundation
import MediaStore

/// Downloads one file through the cache's loader (`Range` requests of the
/// missing chunks only): the queue's built-in ``DownloadPerformer``.
public struct ProgressiveDownloadPerformer: DownloadPerformer {
    /// The kind of records it performs (also records whose kind is `nil`).
    public static let kind = "progressive"

    public var kind: String { Self.kind }

    public init() {}

    public func perform(
        _ record: DownloadRecord, in cache: StreamingCache, priority: FetchPriority,
        progress: @escaping @Sendable (Int, Int?) -> Void
    ) async throws(DownloadFailure) -> [StoredEntry] {
        let loader = cache.loader(for: record.url, cacheKey: record.cacheKey, headers: record.headers)
        do {
            let version = try await loader.downloadAll(priority: priority) { bytes, total in progress(bytes, total) }
            return [StoredEntry(key: record.cacheKey, version: version)]
        } catch {
            throw DownloadFailure(error)
        }
    }

    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}
