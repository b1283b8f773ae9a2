import AVFoundation
import Foundation
import MediaDownloads
import MediaStreaming
import Observation

// The AVFoundation check package compiles the glue as MediaStreamingAVFoundationGlue.
#if AVFOUNDATION_STAND_IN
    import MediaStreamingAVFoundationGlue
#else
    import MediaStreamingAVFoundation
#endif

/// A track of the list: its URL is its identity.
struct Track: Identifiable, Hashable, Sendable {
    let id: URL
    let title: String
}

/// The player's state for the SwiftUI views in `PlayerViews.swift`: what
/// plays, and the downloads of the persistent queue with their progress.
/// Type-checked on Linux against the AVFoundation stand-in
/// (`Tests/AVFoundationCheck`, target `iOSPlayerExample`); the views are not.
@Observable @MainActor final class PlayerModel {
    let tracks: [Track]
    let player = AVPlayer()
    private(set) var nowPlaying: Track?
    /// The queue's records by track URL, refreshed on every progress update.
    private(set) var downloads: [URL: DownloadRecord] = [:]
    /// The whole batch's progress, 0 to 1.
    private(set) var batchFraction = 0.0
    private(set) var failure: String?
    @ObservationIgnored private var queue: DownloadQueue?
    @ObservationIgnored private var updates: Task<Void, Never>?

    init(tracks: [Track]) {
        self.tracks = tracks
    }

    /// Plays `track` while caching it (`StreamingCache.shared`: a 1 GiB
    /// store under Caches/MediaStreaming); a second play comes from disk.
    func play(_ track: Track) {
        player.automaticallyWaitsToMinimizeStalling = false
        player.replaceCurrentItem(with: CachingAVPlayerItem(url: track.id))
        player.play()
        nowPlaying = track
    }

    /// Opens the download queue on `cache` (restored after a relaunch) and
    /// follows its progress until ``close()``.
    func open(cache: StreamingCache = .shared) async {
        do {
            let queue = try await DownloadQueue.open(cache: cache)
            self.queue = queue
            await refresh()
            updates = Task { [weak self] in
                for await aggregate in queue.progressUpdates() {
                    guard let self else { return }
                    self.batchFraction = aggregate.fractionCompleted
                    await self.refresh()
                }
            }
        } catch {
            failure = "The download queue cannot open: \(error)"
        }
    }

    /// Stops following the queue's progress.
    func close() {
        updates?.cancel()
        updates = nil
    }

    /// Queues `track` for offline play (Wi-Fi only); it is kept, pinned,
    /// until removed.
    func download(_ track: Track) async {
        guard let queue else { return }
        do {
            try await queue.enqueue(track.id, conditions: .unmetered)
        } catch {
            failure = "\(track.title) cannot be queued: \(error)"
        }
        await refresh()
    }

    /// Cancels the download of `track` and lets its bytes be evicted.
    func cancelDownload(of track: Track) async {
        guard let queue, let record = downloads[track.id] else { return }
        do {
            try await queue.cancel(record.id)
        } catch {
            failure = "\(track.title) cannot be cancelled: \(error)"
        }
        await refresh()
    }

    /// The fraction of `track` stored, when its size is known.
    func fraction(of track: Track) -> Double? {
        guard let record = downloads[track.id], let total = record.totalBytes, total > 0 else { return nil }
        return Double(record.bytesStored) / Double(total)
    }

    private func refresh() async {
        guard let queue else { return }
        let records = await queue.downloads
        downloads = Dictionary(records.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
