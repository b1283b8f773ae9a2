import AVFoundation
import Foundation
import MediaStore
import MediaStreaming
import MediaStreamingAVFoundationGlue
import Testing

@testable import iOSPlayerExample

/// The iOS example's model (Examples/iOSPlayer/PlayerModel.swift), driven
/// against the stand-in: playing gives AVPlayer a caching item, and a
/// download goes into the persistent queue (to an unreachable origin, so
/// nothing leaves the machine).
@Suite struct iOSPlayerExampleTests {
    @Test @MainActor func playingGivesThePlayerACachingItem() throws {
        let track = iOSPlayerExample.Track(id: URL(string: "https://cdn.example.com/music/a.mp3")!, title: "A")
        let model = iOSPlayerExample.PlayerModel(tracks: [track])
        model.play(track)
        let item = try #require(model.player.currentItem as? CachingAVPlayerItem)
        #expect(item.streamingItem.url == track.id)
        #expect(model.nowPlaying == track)
        #expect(model.player.rate == 1)
    }

    @Test @MainActor func aDownloadIsQueuedAndListed() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ios-player-example-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = StreamingCache(store: try MediaStore(directory: directory))
        let track = iOSPlayerExample.Track(id: URL(string: "http://127.0.0.2:9/track.mp3")!, title: "Unreachable")
        let model = iOSPlayerExample.PlayerModel(tracks: [track])
        await model.open(cache: cache)
        #expect(model.failure == nil)
        #expect(model.downloads.isEmpty)
        await model.download(track)
        #expect(model.downloads[track.id] != nil)
        #expect(model.fraction(of: track) == nil)  // no size known from an unreachable origin
        await model.cancelDownload(of: track)
        model.close()
    }
}
