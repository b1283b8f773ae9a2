import AVFoundation
import MediaStreaming
import MediaStreamingAVFoundationGlue
import Testing

// The Swift block of the README's AVPlayer quick start and of
// MediaStreaming.docc/AVPlayer.md (the same block), compiled as shown
// against the stand-in (`Tools/check-docs` fails when a block of the
// documents is not one of these regions).
// snippet: avplayer-model (Sources/MediaStreaming/MediaStreaming.docc/AVPlayer.md)
@MainActor final class PlayerModel {
    let player = AVPlayer()

    func play(_ trackURL: URL) {
        // StreamingCache.shared: a 1 GiB store under Caches/MediaStreaming.
        let item = CachingAVPlayerItem(url: trackURL)  // or (url:cacheKey:), or (streamingItem:) for your own cache
        // item.streamingItem: delegate and events (readyToPlay, download progress, playbackStalled …)
        player.automaticallyWaitsToMinimizeStalling = false  // AVAssetResourceLoader.h's advice with a loader delegate
        player.replaceCurrentItem(with: item)
        player.play()
    }
}
// end snippet

@Suite struct AVPlayerDocSnippetTests {
    @Test @MainActor func theModelGivesThePlayerACachingItemAndPlays() throws {
        let model = PlayerModel()
        model.play(URL(string: "https://cdn.example.com/music/a.mp3")!)
        let item = try #require(model.player.currentItem as? CachingAVPlayerItem)
        #expect(item.streamingItem.url.absoluteString == "https://cdn.example.com/music/a.mp3")
        #expect(model.player.rate == 1)
        #expect(!model.player.automaticallyWaitsToMinimizeStalling)
    }
}
