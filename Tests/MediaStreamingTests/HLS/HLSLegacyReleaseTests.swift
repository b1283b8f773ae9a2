import Foundation
import HLSPlaylist
import MediaStore
import Testing

@testable import MediaHLS
@testable import MediaStreaming

/// Entries a version before store holds wrote: pinned (now the app's
/// hold) and grouped by `hls.keepers`, the assets keeping them. Releasing
/// every asset that kept an entry lets it go, whichever asset goes last.
@Suite("HLS entries of a version before holds are let go by their last asset")
struct HLSLegacyReleaseTests {
    @Test("A resource two legacy assets kept is released from the app's hold by the second release")
    func sharedLegacyResourceIsReleasedByTheLastAsset() async throws {
        let test = try TestCache()
        let store = try #require(test.store)
        let downloader = HLSDownloader(cache: test.cache)
        let masters = [
            URL(string: "http://127.0.0.2:9/a/master.m3u8")!, URL(string: "http://127.0.0.2:9/b/master.m3u8")!,
        ]
        let shared = "http://127.0.0.2:9/shared/segment0.ts"
        let assets = try LegacyHLSAssets.write(
            masters: masters, sharing: shared, in: store, resources: downloader.resources)

        #expect(try await downloader.release(masters[0]) == 1)  // its master; the shared segment is still B's
        #expect(try store.holders(of: shared) == [MediaStore.appHolder])
        #expect(try store.holders(of: assets[0]).isEmpty)

        #expect(try await downloader.release(masters[1]) == 2)  // its master and the shared segment
        #expect(try store.holders(of: shared).isEmpty, "every asset that kept it let it go, and it stays held")
        #expect(try await downloader.remove(masters[1]) == 2)
        #expect(try store.info(forKey: shared) == nil)
    }
}
