import MediaDownloads
import MediaStreaming

/// A performer that fetches nothing: each run lasts until its task is
/// cancelled (a stop, a cancel, the queue closing), then fails as the
/// user's cancel. A record's bytes are under its cache key. A conformer
/// names its kind once, as `static let kind`, and may give its own keys.
protocol UntilCancelledPerformer: DownloadPerformer {
    static var kind: String { get }
}

extension UntilCancelledPerformer {
    var kind: String { Self.kind }

    func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry] {
        // Until stopped (the sleep ends at the cancellation).
        try? await Task.sleep(for: .seconds(3600))
        throw .cancelled
    }

    func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }
}
